//! The web dashboard, black-box over plain HTTP/1.1: nothing without the
//! token (401 on every page, API and the event stream), the login routes
//! that set the cookie, and pages and data that follow the coordinator.

use std::time::Duration;

use ksweep_coordinator::store::Store;
use ksweep_coordinator::{serve, CoordinatorOptions};
use ksweep_proto::v1 as pb;
use ksweep_proto::v1::sweeps_client::SweepsClient;
use ksweep_proto::v1::workers_client::WorkersClient;
use ksweep_proto::{BearerToken, PROTOCOL_VERSION};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "dashboard-secret";
const SPEC: &str = r#"
    name = "dash"
    seed = 1
    starts = 4
    methods = ["w", "aw"]
    [[grid]]
    rule = [2, 1]
    dims = [2]
    n = [5, 6]
"#;

/// A coordinator with a token and a dashboard; returns (gRPC url, HTTP address).
async fn start() -> (String, String) {
    let http = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap()
    };
    let options = CoordinatorOptions { token: Some(TOKEN.into()), http: Some(http), ..Default::default() };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(serve(listener, Store::in_memory().unwrap(), options, std::future::pending()));
    // The dashboard is up once it answers.
    for _ in 0..200 {
        if TcpStream::connect(http).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (url, http.to_string())
}

/// A response: status code, headers (lower-case names) and as much body as
/// came within a moment (event streams never end).
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

async fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Response {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match tokio::time::timeout(Duration::from_millis(1500), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Err(_) => break,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => panic!("reading {path}: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|c| c.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Response { status, headers, body: body.to_string() }
}

async fn get(addr: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    request(addr, "GET", path, headers, "").await
}

const BEARER: (&str, &str) = ("Authorization", "Bearer dashboard-secret");

#[tokio::test]
async fn nothing_is_served_without_the_token() {
    let (_, addr) = start().await;
    let routes = [
        "/",
        "/api/sweeps",
        "/api/sweeps/abc",
        "/api/workers",
        "/events",
        "/sweeps/abc/results.csv",
        "/sweeps/abc/results.jsonl",
        "/sweeps/abc/results.parquet",
        "/sweeps/abc/report.html",
    ];
    for path in routes {
        for headers in [&[][..], &[("Authorization", "Bearer wrong")], &[("Cookie", "ksweep_token=wrong")]] {
            let r = get(&addr, path, headers).await;
            assert_eq!(r.status, 401, "{path} with {headers:?}");
            assert!(!r.body.contains("<script"), "{path}: no page without the token");
        }
        let r = get(&addr, &format!("{path}?token=wrong"), &[]).await;
        assert_eq!(r.status, 401, "{path}?token=wrong");
    }
    assert_eq!(get(&addr, "/login", &[]).await.status, 200, "the login form is open");
}

#[tokio::test]
async fn the_login_form_and_link_set_a_cookie_that_opens_the_pages() {
    let (_, addr) = start().await;
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let wrong = request(&addr, "POST", "/login", &form, "token=nope").await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.header("set-cookie").is_none());
    let right = request(&addr, "POST", "/login", &form, "token=dashboard-secret").await;
    assert_eq!(right.status, 303);
    let cookie = right.header("set-cookie").unwrap().split(';').next().unwrap().to_string();
    assert_eq!(cookie, "ksweep_token=dashboard-secret");
    assert!(right.header("set-cookie").unwrap().contains("HttpOnly"));
    let page = get(&addr, "/", &[("Cookie", &cookie)]).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<title>knight-sweep</title>") && page.body.contains("EventSource(\"/events\")"));

    let link = get(&addr, "/?token=dashboard-secret", &[]).await;
    assert_eq!(link.status, 303, "the link sets the cookie and drops the token from the address");
    assert_eq!(link.header("location"), Some("/"));
    assert!(link.header("set-cookie").unwrap().starts_with("ksweep_token=dashboard-secret"));
}

#[tokio::test]
async fn the_api_follows_sweeps_and_workers_and_events_stream() {
    let (url, addr) = start().await;
    let channel = tonic::transport::Endpoint::from_shared(url).unwrap().connect().await.unwrap();
    let token = BearerToken::new(Some(TOKEN)).unwrap();
    let mut sweeps = SweepsClient::with_interceptor(channel.clone(), token.clone());
    let id =
        sweeps.submit(pb::SubmitRequest { spec_toml: SPEC.into(), resume: false }).await.unwrap().into_inner().sweep_id;
    let mut workers = WorkersClient::with_interceptor(channel, token);
    let register = pb::RegisterRequest { protocol_version: PROTOCOL_VERSION, name: "host-a".into(), threads: 3 };
    workers.register(register).await.unwrap();

    let list: serde_json::Value = serde_json::from_str(&get(&addr, "/api/sweeps", &[BEARER]).await.body).unwrap();
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!((list[0]["state"].as_str(), list[0]["done"].as_u64()), (Some("running"), Some(0)));
    assert!(list[0]["eta_text"].is_null(), "no ETA before work starts");

    // A sweep by a prefix of its id: status, methods, tables, spec.
    let one = get(&addr, &format!("/api/sweeps/{}", &id[..6]), &[BEARER]).await;
    assert_eq!(one.status, 200, "{}", one.body);
    let one: serde_json::Value = serde_json::from_str(&one.body).unwrap();
    assert_eq!(one["methods"].as_array().unwrap().len(), 2);
    assert!(one["tables"].as_str().unwrap().contains("<table class=\"ksweep-table\">"));
    assert!(one["spec"].as_str().unwrap().contains("name = \"dash\""));
    assert!(one["warning"].as_str().unwrap().starts_with("UNFINISHED sweep (running)"));
    assert_eq!(get(&addr, "/api/sweeps/ffffffff", &[BEARER]).await.status, 404);

    let w: serde_json::Value = serde_json::from_str(&get(&addr, "/api/workers", &[BEARER]).await.body).unwrap();
    let w = &w["workers"][0];
    assert_eq!(
        (w["name"].as_str(), w["threads"].as_u64(), w["state"].as_str()),
        (Some("host-a"), Some(3), Some("alive"))
    );

    let events = get(&addr, "/events", &[BEARER]).await;
    assert_eq!(events.status, 200);
    assert_eq!(events.header("content-type"), Some("text/event-stream"));
    assert!(events.body.contains("event: change"), "{}", events.body);

    let csv = get(&addr, &format!("/sweeps/{id}/results.csv"), &[BEARER]).await;
    assert_eq!(csv.status, 200);
    assert!(csv.body.contains("rule,dims,n,shape,method,start,success"), "{}", csv.body);
    let report = get(&addr, &format!("/sweeps/{id}/report.html"), &[BEARER]).await;
    assert!(report.body.contains("<section id=\"accuracy\">"));
}
