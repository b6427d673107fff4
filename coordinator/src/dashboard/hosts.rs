//! The host names the dashboard answers to. A page on some other site whose
//! name an attacker points at this address (DNS rebinding) reaches the port
//! with its own name in `Host`: only the address the dashboard listens on,
//! `localhost` when that is a loopback or wildcard address, and names given
//! with `--http-host` are served. Ports are not compared: a name is what a
//! rebinding changes, and a published port (Docker's `-p 9090:8080`) is
//! often not the one listened on.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Dashboard;

/// Accepted hosts: the listening address and the names it was given.
#[derive(Debug, Clone)]
pub(crate) struct Hosts {
    listen: IpAddr,
    names: Vec<String>,
    /// `--http-host '*'`: every name (a proxy in front checks them).
    any: bool,
}

/// The name in a `Host` header (or a URL's authority): lower case, without
/// port, brackets or a trailing dot. None when it is not one.
fn host_name(authority: &str) -> Option<String> {
    let authority = authority.trim();
    let name = if let Some(v6) = authority.strip_prefix('[') {
        let (ip, rest) = v6.split_once(']')?;
        if !(rest.is_empty() || rest.strip_prefix(':').is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))) {
            return None;
        }
        ip
    } else {
        match authority.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            Some(_) => return None,
            None => authority,
        }
    };
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    (!name.is_empty() && !name.contains(['/', '@', ' ', '[', ']'])).then_some(name)
}

impl Hosts {
    /// The hosts of a dashboard listening on `listen`, and `names` besides
    /// (`*` for any).
    pub(crate) fn new(listen: SocketAddr, names: &[String]) -> Hosts {
        Hosts {
            listen: listen.ip(),
            names: names.iter().filter_map(|n| host_name(n)).collect(),
            any: names.iter().any(|n| n.trim() == "*"),
        }
    }

    /// True when a request naming `authority` is served.
    pub(crate) fn allows(&self, authority: &str) -> bool {
        if self.any {
            return true;
        }
        let Some(name) = host_name(authority) else { return false };
        if self.names.contains(&name) {
            return true;
        }
        let wildcard = self.listen.is_unspecified();
        match name.parse::<IpAddr>() {
            // Any address of this machine when listening on all of them.
            Ok(ip) => wildcard || ip == self.listen || (ip.is_loopback() && self.listen.is_loopback()),
            Err(_) => name == "localhost" && (wildcard || self.listen.is_loopback()),
        }
    }

    /// What the refusal says: the accepted names and how to add one.
    fn refusal(&self, named: Option<&str>) -> String {
        let mut accepted =
            if self.listen.is_unspecified() { "this machine's addresses".to_string() } else { self.listen.to_string() };
        if self.listen.is_loopback() || self.listen.is_unspecified() {
            accepted.push_str(", localhost");
        }
        for n in &self.names {
            accepted.push_str(", ");
            accepted.push_str(n);
        }
        let named =
            named.map_or("no host".to_string(), |h| format!("host {:?}", h.chars().take(100).collect::<String>()));
        format!(
            "this dashboard does not answer to {named}: it answers to {accepted}. \
             Behind a proxy or under another name, start it with --http-host NAME"
        )
    }
}

/// Serves a request only if it names an accepted host (421 otherwise).
pub(super) async fn require_host(State(d): State<Dashboard>, request: Request, next: Next) -> Response {
    // An absolute-form request line names the host in the URI; else `Host`.
    let named = match request.uri().authority() {
        Some(a) => Some(a.as_str().to_string()),
        None => request.headers().get(header::HOST).and_then(|v| v.to_str().ok()).map(str::to_string),
    };
    if named.as_deref().is_some_and(|h| d.hosts.allows(h)) {
        return next.run(request).await;
    }
    (StatusCode::MISDIRECTED_REQUEST, d.hosts.refusal(named.as_deref())).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(listen: &str, names: &[&str]) -> Hosts {
        Hosts::new(listen.parse().unwrap(), &names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn a_loopback_dashboard_answers_to_its_address_and_localhost_only() {
        let h = hosts("127.0.0.1:8080", &[]);
        for ok in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "localhost:8080",
            "LOCALHOST",
            "localhost.:8080",
            "127.0.0.2:80",
            "[::1]:8080",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for refused in
            ["evil.example", "evil.example:8080", "10.0.0.1:8080", "localhost.evil.example", "", ":8080", "a b"]
        {
            assert!(!h.allows(refused), "{refused}");
        }
    }

    #[test]
    fn a_wildcard_dashboard_answers_to_any_address_but_no_other_name() {
        let h = hosts("0.0.0.0:8080", &[]);
        for ok in ["10.1.2.3:8080", "127.0.0.1:9090", "localhost", "[fe80::1]:8080"] {
            assert!(h.allows(ok), "{ok}");
        }
        assert!(!h.allows("rebound.evil.example:8080"));
        assert!(h.refusal(Some("x")).contains("--http-host"));
    }

    #[test]
    fn names_given_are_accepted_and_a_star_accepts_every_name() {
        let h = hosts("10.0.0.5:8080", &["Dash.Example.org", "proxy:443"]);
        assert!(h.allows("dash.example.org"));
        assert!(h.allows("dash.example.org.:8443"));
        assert!(h.allows("proxy"));
        assert!(h.allows("10.0.0.5:8080"));
        assert!(!h.allows("localhost:8080"), "not a loopback address");
        assert!(!h.allows("10.0.0.6:8080"));
        assert!(!h.allows("evil.example"));
        assert!(hosts("10.0.0.5:8080", &["*"]).allows("anything.example"));
    }
}
