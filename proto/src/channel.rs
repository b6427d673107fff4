//! Channels to a coordinator: the endpoint for a URL (TLS or not), the
//! settings that let a worker notice a coordinator that stopped answering,
//! and the bearer token every call carries.

use std::time::Duration;

use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};

/// Why [`endpoint`] refused a coordinator address.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("{url:?} has no scheme: did you mean http://{url} (or https:// for a coordinator with TLS)?")]
    NoScheme { url: String },
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
pub fn endpoint(url: &str, ca_pem: Option<&[u8]>) -> Result<Endpoint, EndpointError> {
    if !url.contains("://") {
        return Err(EndpointError::NoScheme { url: url.into() });
    }
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

/// How a worker's channel notices a coordinator that stopped answering (a
/// frozen process, a black-holed network): every call is bounded in time,
/// and HTTP/2 pings check the connection even while no call is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    /// Longest wait for a TCP (and TLS) connection.
    pub connect: Duration,
    /// Longest any call may take. Before the lease is known (Register) the
    /// only bound; after it, [`call_timeout`] shortens it per call.
    pub request: Duration,
    /// A ping after this long without a frame from the coordinator...
    pub keep_alive_interval: Duration,
    /// ...which, unanswered this long, closes the connection.
    pub keep_alive_timeout: Duration,
}

impl Default for Liveness {
    fn default() -> Liveness {
        Liveness {
            connect: Duration::from_secs(5),
            request: Duration::from_secs(30),
            keep_alive_interval: Duration::from_secs(10),
            keep_alive_timeout: Duration::from_secs(10),
        }
    }
}

/// Shortest [`call_timeout`], whatever lease a coordinator announces.
pub const MIN_CALL_TIMEOUT: Duration = Duration::from_millis(250);

/// How long one call may take under a `lease`: half of it, so a call that
/// hangs leaves time to try again before the shards it heartbeats expire.
pub fn call_timeout(lease: Duration) -> Duration {
    (lease / 2).max(MIN_CALL_TIMEOUT)
}

/// A worker's endpoint: [`endpoint`] with the [`Liveness`] settings and no
/// Nagle delay (polls are small and latency-bound).
pub fn worker_endpoint(url: &str, ca_pem: Option<&[u8]>, liveness: &Liveness) -> Result<Endpoint, EndpointError> {
    Ok(endpoint(url, ca_pem)?
        .connect_timeout(liveness.connect)
        .timeout(liveness.request)
        .http2_keep_alive_interval(liveness.keep_alive_interval)
        .keep_alive_timeout(liveness.keep_alive_timeout)
        .keep_alive_while_idle(true)
        .tcp_nodelay(true))
}

/// An error and its sources on one line: tonic's transport errors say only
/// "transport error" themselves, the cause is in the chain.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    join_causes(std::iter::successors(Some(e), |e| e.source()).map(ToString::to_string))
}

/// Causes joined by `: `, each said once: a cause is left out when the
/// text so far already ends with it, as when an error's message includes
/// its source (`coordinator: X`, then X) or hyper wraps an error in one of
/// the same words ("tcp connect error", twice).
pub fn join_causes(causes: impl IntoIterator<Item = String>) -> String {
    let mut text = String::new();
    for cause in causes {
        if text.is_empty() {
            text = cause;
        } else if text != cause && !text.ends_with(&format!(": {cause}")) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// Why a token is refused, by the coordinator's library and every client
/// alike: an empty or blank one would silently mean "no authentication",
/// and one with spaces at its ends or control characters does not survive
/// a header (or a token file) as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("empty or only spaces; give a token of at least one visible character, or none at all")]
    Blank,
    #[error("begins or ends with a space")]
    Padded,
    #[error("holds a control or non-ASCII character; a token travels in an HTTP header")]
    NotHeaderText,
}

/// Checks a token against [`TokenError`]'s rules.
pub fn check_token(token: &str) -> Result<(), TokenError> {
    if token.trim().is_empty() {
        Err(TokenError::Blank)
    } else if token.trim() != token {
        Err(TokenError::Padded)
    } else if !token.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        Err(TokenError::NotHeaderText)
    } else {
        Ok(())
    }
}

/// Client-side token: adds `authorization: Bearer <token>` to every call
/// when a token is set.
#[derive(Debug, Clone, Default)]
pub struct BearerToken(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl BearerToken {
    /// A token to send, or none; a token [`check_token`] refuses is an
    /// error, never quietly no header.
    pub fn new(token: Option<&str>) -> Result<BearerToken, TokenError> {
        let Some(token) = token else { return Ok(BearerToken(None)) };
        check_token(token)?;
        let value = format!("Bearer {token}").parse().map_err(|_| TokenError::NotHeaderText)?;
        Ok(BearerToken(Some(value)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1 as pb;

    #[test]
    fn a_cause_already_said_is_not_said_again() {
        let causes = |texts: &[&str]| join_causes(texts.iter().map(|t| t.to_string()));
        assert_eq!(
            causes(&["coordinator: \"x\" has no scheme", "\"x\" has no scheme"]),
            "coordinator: \"x\" has no scheme"
        );
        assert_eq!(
            causes(&["transport error", "tcp connect error", "tcp connect error", "refused"]),
            "transport error: tcp connect error: refused"
        );
        assert_eq!(causes(&["a", "b", "a"]), "a: b: a", "only what the text ends with goes");
        assert_eq!(causes(&["error: abc", "bc"]), "error: abc: bc", "a cause is a whole part, not a suffix");
        let e = EndpointError::NoScheme { url: "BAD".into() };
        assert_eq!(error_chain(&e), e.to_string());
    }

    #[test]
    fn calls_get_half_a_lease_and_never_less_than_the_floor() {
        assert_eq!(call_timeout(Duration::from_secs(10)), Duration::from_secs(5));
        assert_eq!(call_timeout(Duration::from_millis(100)), MIN_CALL_TIMEOUT);
        assert_eq!(call_timeout(Duration::ZERO), MIN_CALL_TIMEOUT);
    }

    /// Serves a peer that accepts connections and never sends a byte (a
    /// frozen process, or a network that drops everything after the
    /// handshake); returns its URL.
    async fn silent_peer() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        url
    }

    /// Calls Register on `liveness`'s endpoint to a silent peer; how long
    /// it took to fail. Real sockets do not follow tokio's paused clock, so
    /// the timeouts here are short real ones.
    async fn register_with_silent_peer(liveness: Liveness) -> Duration {
        let channel = worker_endpoint(&silent_peer().await, None, &liveness).unwrap().connect_lazy();
        let mut client = pb::workers_client::WorkersClient::new(channel);
        let began = std::time::Instant::now();
        let call = client.register(pb::RegisterRequest::default());
        let result = tokio::time::timeout(Duration::from_secs(10), call).await.expect("the call should end");
        result.expect_err("nobody answered");
        began.elapsed()
    }

    const LONG: Duration = Duration::from_secs(60);

    #[tokio::test]
    async fn a_call_to_a_silent_coordinator_times_out() {
        let short = Duration::from_millis(300);
        let liveness = Liveness { connect: short, request: short, keep_alive_interval: LONG, keep_alive_timeout: LONG };
        let took = register_with_silent_peer(liveness).await;
        assert!(took < Duration::from_secs(3), "took {took:?}");
    }

    #[tokio::test]
    async fn keep_alive_pings_close_a_silent_connection() {
        let short = Duration::from_millis(200);
        let liveness = Liveness { connect: LONG, request: LONG, keep_alive_interval: short, keep_alive_timeout: short };
        let took = register_with_silent_peer(liveness).await;
        assert!(took < Duration::from_secs(3), "took {took:?}");
    }
}
