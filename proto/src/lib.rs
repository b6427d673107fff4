//! knight-sweep's wire protocol: the `Sweeps` service for clients and the
//! `Workers` service for workers, generated from `ksweep/v1/ksweep.proto`.

#![allow(clippy::all, missing_docs)]

/// Generated messages, clients and servers of `ksweep.v1`.
pub mod v1 {
    tonic::include_proto!("ksweep.v1");
}

/// Version a worker must announce at registration; bumped on any
/// incompatible change to the protocol.
pub const PROTOCOL_VERSION: u32 = 1;

/// Encoded file descriptor set, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("ksweep_descriptor");

/// Client-side token: adds `authorization: Bearer <token>` to every call
/// when a token is set.
#[derive(Debug, Clone, Default)]
pub struct BearerToken(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl BearerToken {
    /// A token to send, or none (an empty token is none, as an empty
    /// `KSWEEP_TOKEN` means). Fails if the token is not valid header text.
    pub fn new(token: Option<&str>) -> Result<BearerToken, tonic::metadata::errors::InvalidMetadataValue> {
        token.filter(|t| !t.is_empty()).map(|t| format!("Bearer {t}").parse()).transpose().map(BearerToken)
    }
}

impl tonic::service::Interceptor for BearerToken {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}
