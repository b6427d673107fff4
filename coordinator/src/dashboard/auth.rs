//! The dashboard's token check: a header, the session cookie, or a
//! `?token=` link that sets the cookie and drops the token from the URL.
//! A request let through proves its connection a client's
//! ([`ConnectionInfo::prove`]).
//!
//! Any token works in a link and a cookie: the link's is percent-decoded,
//! and the cookie holds it percent-encoded (a `;`, `,` or space would
//! otherwise end or split the cookie).

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

fn prove(connection: Option<&ConnectionInfo>) {
    if let Some(connection) = connection {
        connection.prove();
    }
}

/// Lets a request through with the right token (or when none is set).
pub(super) async fn require_token(State(d): State<Dashboard>, request: Request, next: Next) -> Response {
    let connection = request.extensions().get::<ConnectionInfo>().cloned();
    let Some(expected) = d.token.as_deref() else {
        prove(connection.as_ref());
        return next.run(request).await;
    };
    if presented(request.headers()).is_some_and(|t| valid(expected, &t)) {
        prove(connection.as_ref());
        return next.run(request).await;
    }
    // A login link: `?token=...` sets the cookie and goes to the same page without it.
    let link = linked(request.uri().query().unwrap_or_default());
    if let Some(token) = link.filter(|t| valid(expected, t)) {
        prove(connection.as_ref());
        let to = same_origin(request.uri().path());
        return ([(header::SET_COOKIE, session_cookie(&token))], Redirect::to(&to)).into_response();
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
    match d.token.as_deref() {
        Some(expected) if !valid(expected, &login.token) => {
            (StatusCode::UNAUTHORIZED, Html("<!DOCTYPE html><p>Wrong token. <a href=\"/login\">Try again</a>.</p>"))
                .into_response()
        }
        _ => {
            prove(connection.map(|Extension(c)| c).as_ref());
            ([(header::SET_COOKIE, session_cookie(&login.token))], Redirect::to("/")).into_response()
        }
    }
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
