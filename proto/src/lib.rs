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

/// Why [`endpoint`] refused a coordinator address.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("{url:?} is not a URL: {why}")]
    Url { url: String, why: String },
    #[error("{url:?}: a CA certificate (--tls-ca) needs an https:// URL")]
    CaWithoutHttps { url: String },
    #[error("{url:?}: TLS set-up failed: {why}")]
    Tls { url: String, why: String },
}

/// The channel endpoint for a coordinator URL, shared by clients and
/// workers. `https://` turns on TLS (rustls), trusting `ca_pem` when given
/// (a private CA or a self-signed coordinator), else the public web roots.
pub fn endpoint(url: &str, ca_pem: Option<&[u8]>) -> Result<tonic::transport::Endpoint, EndpointError> {
    use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};
    let endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| EndpointError::Url { url: url.into(), why: e.to_string() })?;
    let https = endpoint.uri().scheme_str() == Some("https");
    if !https {
        return match ca_pem {
            Some(_) => Err(EndpointError::CaWithoutHttps { url: url.into() }),
            None => Ok(endpoint),
        };
    }
    let tls = match ca_pem {
        Some(pem) => ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem)),
        None => ClientTlsConfig::new().with_webpki_roots(),
    };
    endpoint.tls_config(tls).map_err(|e| EndpointError::Tls { url: url.into(), why: e.to_string() })
}

/// An error and its sources on one line: tonic's transport errors say only
/// "transport error" themselves, the cause is in the chain.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

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
