//! `ksweep health`: a grpc.health.v1 check, for container health checks
//! (a scratch image has no shell or curl).

use anyhow::{bail, Result};
use clap::Args;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

use crate::connect::ConnectArgs;

/// Exit 0 when the coordinator answers SERVING.
#[derive(Debug, Args)]
pub struct HealthArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
}

pub async fn run(args: HealthArgs, out: &mut impl std::io::Write) -> Result<()> {
    let (channel, token) = args.connect.channel().await?;
    let mut client = HealthClient::with_interceptor(channel, token);
    let reply = client.check(HealthCheckRequest { service: String::new() }).await?.into_inner();
    if reply.status != ServingStatus::Serving as i32 {
        bail!("coordinator is not serving (status {})", reply.status);
    }
    writeln!(out, "coordinator serving")?;
    Ok(())
}
