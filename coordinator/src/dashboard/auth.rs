//! The dashboard's token check: a header, the session cookie, or a
//! `?token=` link that sets the cookie and drops the token from the URL.
//! Wrong tokens are limited per source and in all ([`super::guesses`]);
//! a request let through proves its connection a client's
//! ([`ConnectionInfo::prove`]).
//!
//! Any token works in a link and a cookie: the link's is percent-decoded,
//! and the cookie holds it percent-encoded (a `;`, `,` or space would
//! otherwise end or split the cookie).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Deserialize;

use super::Dashboard;
use crate::connections::ConnectionInfo;
use crate::secret::constant_time_eq;
use crate::state::now;

const COOKIE: &str = "ksweep_token";

/// Encoded in the cookie: everything but RFC 3986's unreserved characters.
const COOKIE_ESCAPED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Percent-decoded text; None when the bytes it names are not UTF-8.
fn decoded(text: &str) -> Option<String> {
    percent_decode_str(text).decode_utf8().ok().map(|t| t.into_owned())
}

/// The token a request presents, if any: header first, then cookie.
fn presented(headers: &HeaderMap) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    bearer.or_else(|| {
        let cookies = headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok());
        cookies.flat_map(|c| c.split(';')).find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == COOKIE).then(|| decoded(value)).flatten()
        })
    })
}

/// The token of a `?token=` link, percent-decoded (`+` stays a plus: the
/// coordinator prints links, not forms).
fn linked(query: &str) -> Option<String> {
    query.split('&').find_map(|kv| kv.strip_prefix("token=")).and_then(decoded)
}

/// Where a login link goes once the cookie is set: the same path on this
/// site. One leading slash whatever the request had (`//host/x` is another
/// site to a browser), and backslashes escaped (browsers read `/\host` as
/// `//host`).
fn same_origin(path: &str) -> String {
    let rest = path.trim_start_matches(['/', '\\']);
    format!("/{}", rest.replace('\\', "%5C"))
}

fn valid(expected: &str, given: &str) -> bool {
    constant_time_eq(given.as_bytes(), expected.as_bytes())
}

/// A cookie holding the token for this site only, out of scripts' reach.
fn session_cookie(token: &str) -> String {
    format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", utf8_percent_encode(token, COOKIE_ESCAPED))
}

/// The address a request came from (unspecified if unknown, which the
/// server never leaves it).
fn peer(connection: Option<&ConnectionInfo>) -> IpAddr {
    connection.and_then(ConnectionInfo::remote_addr).map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.ip())
}

fn prove(connection: Option<&ConnectionInfo>) {
    if let Some(connection) = connection {
        connection.prove();
    }
}

impl Dashboard {
    /// Which of the tokens `given` (one request's) is right, if any,
    /// unless their source has shown too many wrong ones: then how long it
    /// must wait, the tokens unread. A request with none right is one
    /// wrong guess, however many it showed.
    fn check(&self, expected: &str, given: &[Option<&str>], peer: IpAddr) -> Result<Option<usize>, Duration> {
        let mut guesses = self.guesses.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(wait) = guesses.admit(peer, now()) {
            tracing::debug!(%peer, ?wait, "dashboard: a token refused unread, too many wrong ones");
            return Err(wait);
        }
        let right = given.iter().position(|t| t.is_some_and(|t| valid(expected, t)));
        if right.is_none() && guesses.failed(peer, now()) {
            tracing::warn!(%peer, "dashboard: too many wrong tokens; this source's are refused for a while");
        }
        Ok(right)
    }
}

/// 429, and when to try again (whole seconds, rounded up).
fn too_many(wait: Duration) -> Response {
    let secs = (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1);
    let body = format!("<!DOCTYPE html><p>Too many wrong tokens from this address. Try again in {secs} s.</p>");
    (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, secs.to_string())], Html(body)).into_response()
}

/// Lets a request through with the right token (or when none is set).
pub(super) async fn require_token(State(d): State<Dashboard>, request: Request, next: Next) -> Response {
    let connection = request.extensions().get::<ConnectionInfo>().cloned();
    let Some(expected) = d.token.as_deref() else {
        prove(connection.as_ref());
        return next.run(request).await;
    };
    // Header or cookie; else a login link: `?token=...` sets the cookie
    // and goes to the same page without it.
    let shown = presented(request.headers());
    let link = linked(request.uri().query().unwrap_or_default());
    if shown.is_some() || link.is_some() {
        match d.check(expected, &[shown.as_deref(), link.as_deref()], peer(connection.as_ref())) {
            Err(wait) => return too_many(wait),
            Ok(Some(0)) => {
                prove(connection.as_ref());
                return next.run(request).await;
            }
            Ok(Some(_)) => {
                prove(connection.as_ref());
                let to = same_origin(request.uri().path());
                let cookie = session_cookie(link.as_deref().unwrap_or_default());
                return ([(header::SET_COOKIE, cookie)], Redirect::to(&to)).into_response();
            }
            Ok(None) => {}
        }
    }
    let body = "<!DOCTYPE html><title>knight-sweep: token needed</title>\
                <p>This coordinator needs its token. <a href=\"/login\">Log in</a>.</p>";
    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], Html(body)).into_response()
}

pub(super) async fn login_form() -> Html<&'static str> {
    Html(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>knight-sweep: log in</title>\
         <style>body{font-family:sans-serif;max-width:28em;margin:4em auto}input{font-size:1em;padding:.3em}</style></head>\
         <body><h1>knight-sweep</h1><form method=\"post\" action=\"/login\">\
         <label>Coordinator token <input type=\"password\" name=\"token\" autofocus></label> \
         <button type=\"submit\">Log in</button></form></body></html>",
    )
}

#[derive(Deserialize)]
pub(super) struct Login {
    token: String,
}

pub(super) async fn login(
    State(d): State<Dashboard>,
    connection: Option<Extension<ConnectionInfo>>,
    Form(login): Form<Login>,
) -> Response {
    let connection = connection.map(|Extension(c)| c);
    if let Some(expected) = d.token.as_deref() {
        match d.check(expected, &[Some(&login.token)], peer(connection.as_ref())) {
            Err(wait) => return too_many(wait),
            Ok(None) => {
                let body = "<!DOCTYPE html><p>Wrong token. <a href=\"/login\">Try again</a>.</p>";
                return (StatusCode::UNAUTHORIZED, Html(body)).into_response();
            }
            Ok(Some(_)) => {}
        }
    }
    prove(connection.as_ref());
    ([(header::SET_COOKIE, session_cookie(&login.token))], Redirect::to("/")).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_link_redirects_to_a_path_on_this_site_only() {
        assert_eq!(same_origin("/"), "/");
        assert_eq!(same_origin("/api/sweeps"), "/api/sweeps");
        assert_eq!(same_origin("//evil.example/x"), "/evil.example/x");
        assert_eq!(same_origin("///evil.example"), "/evil.example");
        assert_eq!(same_origin("/\\evil.example/x"), "/evil.example/x");
        assert_eq!(same_origin("/a\\b"), "/a%5Cb");
        assert_eq!(same_origin(""), "/");
    }

    #[test]
    fn tokens_are_percent_decoded_from_links_and_round_trip_through_the_cookie() {
        assert_eq!(linked("a=1&token=x%3By%20z+w").as_deref(), Some("x;y z+w"));
        assert_eq!(linked("token=%FF"), None, "not UTF-8");
        assert_eq!(linked("tokens=x"), None);
        let token = "t;k,n \"q\"\\=é";
        let cookie = session_cookie(token);
        let value = cookie.split(';').next().unwrap();
        assert!(value.bytes().all(|b| b.is_ascii_alphanumeric() || b"%-._~=".contains(&b)), "{value}");
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, format!("other=1; {value}").parse().unwrap());
        assert_eq!(presented(&headers).as_deref(), Some(token));
    }
}
