//! The dashboard's token check: a header, the session cookie, or a
//! `?token=` link that sets the cookie and drops the token from the URL.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use super::Dashboard;
use crate::secret::constant_time_eq;

const COOKIE: &str = "ksweep_token";

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
            (name == COOKIE).then(|| value.to_string())
        })
    })
}

fn valid(expected: &str, given: &str) -> bool {
    constant_time_eq(given.as_bytes(), expected.as_bytes())
}

/// A cookie holding the token for this site only, out of scripts' reach.
fn session_cookie(token: &str) -> String {
    format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/")
}

/// Lets a request through with the right token (or when none is set).
pub(super) async fn require_token(State(d): State<Dashboard>, request: Request, next: Next) -> Response {
    let Some(expected) = d.token.as_deref() else { return next.run(request).await };
    if presented(request.headers()).is_some_and(|t| valid(expected, &t)) {
        return next.run(request).await;
    }
    // A login link: `?token=...` sets the cookie and goes to the same page without it.
    let query = request.uri().query().unwrap_or_default();
    let linked = query.split('&').find_map(|kv| kv.strip_prefix("token="));
    if let Some(token) = linked.filter(|t| valid(expected, t)) {
        let path = request.uri().path().to_string();
        return ([(header::SET_COOKIE, session_cookie(token))], Redirect::to(&path)).into_response();
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

pub(super) async fn login(State(d): State<Dashboard>, Form(login): Form<Login>) -> Response {
    match d.token.as_deref() {
        Some(expected) if !valid(expected, &login.token) => {
            (StatusCode::UNAUTHORIZED, Html("<!DOCTYPE html><p>Wrong token. <a href=\"/login\">Try again</a>.</p>"))
                .into_response()
        }
        _ => ([(header::SET_COOKIE, session_cookie(&login.token))], Redirect::to("/")).into_response(),
    }
}
