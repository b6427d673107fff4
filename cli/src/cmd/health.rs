//! `ksweep health`: a grpc.health.v1 check, for container health checks
//! (a scratch image has no shell or curl).

use anyhow::{bail, Result};
use clap::Args;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

use crate::cmd::client::ConnectArgs;

/// Exit 0 when the coordinator answers SERVING.
#[derive(Debug, Args)]
pub struct HealthArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
}

pub async fn health(args: HealthArgs) -> Result<()> {
    let channel = tonic::transport::Endpoint::from_shared(args.connect.coordinator.clone())?
        .connect_timeout(std::time::Duration::from_secs(3))
        .connect()
        .await?;
    let token = ksweep_proto::BearerToken::new(args.connect.token.as_deref())?;
    let mut client = HealthClient::with_interceptor(channel, token);
    let reply = client.check(HealthCheckRequest { service: String::new() }).await?.into_inner();
    if reply.status != ServingStatus::Serving as i32 {
        bail!("coordinator is not serving (status {})", reply.status);
    }
    Ok(())
}
