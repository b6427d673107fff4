//! The web dashboard, black-box over plain HTTP/1.1: nothing without the
//! token (401 on every page, API and the event stream), the login routes
//! that set the cookie, and pages and data that follow the coordinator.

use std::time::Duration;

use ksweep_coordinator::store::Store;
use ksweep_coordinator::{serve, CoordinatorOptions, RateLimit};
use ksweep_proto::v1 as pb;
use ksweep_proto::v1::sweeps_client::SweepsClient;
use ksweep_proto::v1::workers_client::WorkersClient;
use ksweep_proto::{BearerToken, PROTOCOL_VERSION};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "dashboard-secret";
static SPEC: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| sweep::fixtures::knight_spec("dash", 1, 4, &[5, 6]));

/// A coordinator with a token and a dashboard; returns (gRPC url, HTTP address).
async fn start() -> (String, String) {
    start_with(CoordinatorOptions { token: Some(TOKEN.into()), ..Default::default() }).await
}

/// A coordinator with `options` and a dashboard on a free port.
async fn start_with(options: CoordinatorOptions) -> (String, String) {
    let http = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap()
    };
    let options = CoordinatorOptions { http: Some(http), ..options };
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

/// A request naming `addr` as its host unless `headers` name another.
async fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Response {
    request_from("127.0.0.1", addr, method, path, headers, body).await
}

/// A request from the loopback address `source` (127.0.0.0/8 is all this
/// machine's).
async fn request_from(
    source: &str,
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(addr.parse().unwrap()).await.unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        text.push_str(&format!("Host: {addr}\r\n"));
    }
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
    // Every wrong token answered 401, none 429 (the next tests).
    let unlimited = RateLimit { burst: 1000, every: Duration::from_millis(1) };
    let mut options = CoordinatorOptions { token: Some(TOKEN.into()), ..Default::default() };
    options.dashboard.guesses_per_source = unlimited;
    options.dashboard.guesses = unlimited;
    let (_, addr) = start_with(options).await;
    let routes = [
        "/",
        "/api/sweeps",
        "/api/sweeps/abc",
        "/api/workers",
        "/api/changes",
        "/api/sweeps/abc/sections/0",
        "/api/sweeps/abc/figures/accuracy",
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
    assert!(page.body.contains("<title>knight-sweep</title>") && page.body.contains("/api/changes"));

    let link = get(&addr, "/?token=dashboard-secret", &[]).await;
    assert_eq!(link.status, 303, "the link sets the cookie and drops the token from the address");
    assert_eq!(link.header("location"), Some("/"));
    assert!(link.header("set-cookie").unwrap().starts_with("ksweep_token=dashboard-secret"));
}

const FORM: [(&str, &str); 1] = [("Content-Type", "application/x-www-form-urlencoded")];

/// Issue 58's 300 guesses from one address: 10 are checked, the rest are
/// answered 429 with Retry-After, their tokens unread (the right one too),
/// by the form, a header or a link; a request showing no token is no
/// guess; another address logs in.
#[tokio::test]
async fn wrong_tokens_past_a_sources_burst_are_answered_429() {
    let (_, addr) = start().await;
    let mut answered = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..300 {
        let r = request(&addr, "POST", "/login", &FORM, &format!("token=guess-{i}")).await;
        *answered.entry(r.status).or_default() += 1;
    }
    assert_eq!(answered, [(401, 10), (429, 290)].into(), "the default: 10 at once, then one each 6 s");
    let right = request(&addr, "POST", "/login", &FORM, "token=dashboard-secret").await;
    assert_eq!(right.status, 429, "not read, so not told right");
    let wait: u64 = right.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=6).contains(&wait), "{wait}");
    assert!(right.header("set-cookie").is_none());
    assert_eq!(get(&addr, "/api/sweeps", &[("Authorization", "Bearer wrong")]).await.status, 429);
    assert_eq!(get(&addr, "/api/sweeps", &[BEARER]).await.status, 429);
    assert_eq!(get(&addr, "/?token=dashboard-secret", &[]).await.status, 429);
    assert_eq!(get(&addr, "/api/sweeps", &[]).await.status, 401, "no token shown: no guess");
    let elsewhere = request_from("127.0.0.2", &addr, "POST", "/login", &FORM, "token=dashboard-secret").await;
    assert_eq!(elsewhere.status, 303, "another source is not limited");
    assert_eq!(request_from("127.0.0.2", &addr, "GET", "/api/sweeps", &[BEARER], "").await.status, 200);
}

/// Wrong tokens from all sources together are bounded too, but a source
/// that has shown none is never refused: guessing elsewhere locks no one
/// with the right token out.
#[tokio::test]
async fn wrong_tokens_from_all_sources_are_bounded_but_clean_sources_served() {
    let mut options = CoordinatorOptions { token: Some(TOKEN.into()), ..Default::default() };
    options.dashboard.guesses_per_source = RateLimit { burst: 5, every: Duration::from_secs(60) };
    options.dashboard.guesses = RateLimit { burst: 3, every: Duration::from_secs(60) };
    let (_, addr) = start_with(options).await;
    for source in ["127.0.0.2", "127.0.0.3", "127.0.0.2"] {
        let r = request_from(source, &addr, "GET", "/api/sweeps", &[("Authorization", "Bearer wrong")], "").await;
        assert_eq!(r.status, 401, "{source}");
    }
    for source in ["127.0.0.2", "127.0.0.3"] {
        let r = request_from(source, &addr, "POST", "/login", &FORM, "token=dashboard-secret").await;
        assert_eq!(r.status, 429, "{source}: all sources' burst is used");
    }
    let clean = request_from("127.0.0.4", &addr, "POST", "/login", &FORM, "token=dashboard-secret").await;
    assert_eq!(clean.status, 303, "a source with no wrong token logs in");
}

#[tokio::test]
async fn the_api_follows_sweeps_and_workers_and_events_stream() {
    let (url, addr) = start().await;
    let channel = tonic::transport::Endpoint::from_shared(url).unwrap().connect().await.unwrap();
    let token = BearerToken::new(Some(TOKEN)).unwrap();
    let mut sweeps = SweepsClient::with_interceptor(channel.clone(), token.clone());
    let id = sweeps
        .submit(pb::SubmitRequest { spec_toml: SPEC.to_string(), resume: false, no_reuse: false })
        .await
        .unwrap()
        .into_inner()
        .sweep_id;
    let mut workers = WorkersClient::with_interceptor(channel, token);
    let register = pb::RegisterRequest {
        protocol_version: PROTOCOL_VERSION,
        name: "host-a".into(),
        threads: 3,
        memory_bytes: Some(3 << 30),
        labels: vec!["site=lab".into(), "bigmem".into(), "bigmem".into()],
        provenance: None,
    };
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
    // The tables come per (moves, D) section, on request, not with the status.
    assert!(one.get("tables").is_none() && one.get("accuracy_svg").is_none());
    let sections = one["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 1, "{sections:?}");
    assert_eq!((sections[0]["dims"].as_u64(), sections[0]["boards"].as_u64()), (Some(2), Some(2)));
    let table = get(&addr, &format!("/api/sweeps/{id}/sections/0"), &[BEARER]).await;
    assert_eq!(table.status, 200);
    assert!(table.body.contains("<table class=\"ksweep-table\">"), "{}", table.body);
    assert_eq!(get(&addr, &format!("/api/sweeps/{id}/sections/1"), &[BEARER]).await.status, 404);
    assert_eq!(get(&addr, &format!("/api/sweeps/{id}/figures/time"), &[BEARER]).await.status, 204, "nothing to plot");
    assert_eq!(get(&addr, &format!("/api/sweeps/{id}/figures/nope"), &[BEARER]).await.status, 404);
    // Progress as the share of the work, in words too.
    assert_eq!(one["percent"].as_f64(), Some(0.0));
    assert!(one["progress_text"].as_str().unwrap().contains("0/"), "{}", one["progress_text"]);
    assert!(one["spec"].as_str().unwrap().contains("name = \"dash\""));
    assert!(one["warning"].as_str().unwrap().starts_with("UNFINISHED sweep (running)"));
    // When it ran, in words; no result yet, so no worker and no CPU time spent.
    let times: Vec<(&str, &str)> =
        one["times"].as_array().unwrap().iter().map(|t| (t[0].as_str().unwrap(), t[1].as_str().unwrap())).collect();
    assert!(times[0].0 == "submitted" && times[0].1.ends_with(" UTC"), "{times:?}");
    assert_eq!(&times[1..3], [("started", "no result yet"), ("finished", "not yet")]);
    assert_eq!(times.last(), Some(&("CPU time", "0 ms")));
    assert_eq!(one["contributors"], serde_json::json!([]));
    assert_eq!(get(&addr, "/api/sweeps/ffffffff", &[BEARER]).await.status, 404);

    let w: serde_json::Value = serde_json::from_str(&get(&addr, "/api/workers", &[BEARER]).await.body).unwrap();
    let w = &w["workers"][0];
    assert_eq!(
        (w["name"].as_str(), w["threads"].as_u64(), w["state"].as_str()),
        (Some("host-a"), Some(3), Some("alive"))
    );
    // What it advertised, its labels as a set.
    assert_eq!(w["memory_bytes"].as_u64(), Some(3 << 30));
    assert_eq!(w["labels"], serde_json::json!(["bigmem", "site=lab"]));
    assert_eq!(w["memory_text"].as_str(), Some("3.0 GiB"));
    // Asked to leave (`ksweep drain`), it shows as draining.
    sweeps.drain(pb::DrainRequest { worker: "host-a".into(), all: false }).await.unwrap();
    let w: serde_json::Value = serde_json::from_str(&get(&addr, "/api/workers", &[BEARER]).await.body).unwrap();
    assert_eq!(w["workers"][0]["state"].as_str(), Some("draining"));

    let events = get(&addr, "/events", &[BEARER]).await;
    assert_eq!(events.status, 200);
    assert_eq!(events.header("content-type"), Some("text/event-stream"));
    assert!(events.body.contains("event: change"), "{}", events.body);

    let csv = get(&addr, &format!("/sweeps/{id}/results.csv"), &[BEARER]).await;
    assert_eq!(csv.status, 200);
    assert!(csv.body.contains("sweep,rule,moves,dims,n,shape,method,start,success"), "{}", csv.body);
    let report = get(&addr, &format!("/sweeps/{id}/report.html"), &[BEARER]).await;
    assert!(report.body.contains("<section id=\"accuracy\">"));
    assert!(report.body.contains("<section id=\"provenance\">"));
}

/// A login link redirects to a path on this site only: `//evil.example/x`
/// had sent the browser (and its fresh cookie's owner) to evil.example.
#[tokio::test]
async fn a_login_link_never_redirects_to_another_site() {
    let (_, addr) = start().await;
    for (path, to) in [
        ("//evil.example/x?token=dashboard-secret", "/evil.example/x"),
        ("///evil.example?token=dashboard-secret", "/evil.example"),
        ("/api/sweeps?token=dashboard-secret&x=1", "/api/sweeps"),
    ] {
        let r = get(&addr, path, &[]).await;
        assert_eq!(r.status, 303, "{path}");
        assert_eq!(r.header("location"), Some(to), "{path}");
    }
}

/// A linked token is percent-decoded, and a token with `;`, `,` or spaces
/// still makes one well-formed cookie that opens the pages.
#[tokio::test]
async fn any_token_logs_in_by_link_and_cookie() {
    let token = "semi;colon, and space+plus";
    let (_, addr) = start_with(CoordinatorOptions { token: Some(token.into()), ..Default::default() }).await;
    let link = get(&addr, "/?token=semi%3Bcolon%2C%20and%20space+plus", &[]).await;
    assert_eq!(link.status, 303, "{}", link.body);
    let set = link.header("set-cookie").unwrap();
    let cookie = set.split(';').next().unwrap();
    assert_eq!(cookie, "ksweep_token=semi%3Bcolon%2C%20and%20space%2Bplus");
    assert!(set.contains("HttpOnly") && set.contains("SameSite=Strict"), "{set}");
    assert_eq!(get(&addr, "/", &[("Cookie", cookie)]).await.status, 200);
    assert_eq!(get(&addr, "/", &[("Cookie", "ksweep_token=semi")]).await.status, 401, "the token cut at its `;`");
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let posted = request(&addr, "POST", "/login", &form, "token=semi%3Bcolon%2C+and+space%2Bplus").await;
    assert_eq!(posted.status, 303);
    assert_eq!(posted.header("set-cookie").unwrap().split(';').next(), Some(cookie));
}

/// Only requests naming the dashboard's own address (or localhost, on a
/// loopback address) are served: a site rebinding its name to 127.0.0.1
/// gets 421, however open the dashboard is; `--http-host` names more.
#[tokio::test]
async fn only_requests_naming_this_dashboard_are_served() {
    let open = CoordinatorOptions::default(); // no token
    let (_, addr) = start_with(open.clone()).await;
    let port = addr.rsplit(':').next().unwrap().to_string();
    for host in [addr.clone(), format!("localhost:{port}"), "127.0.0.1".into()] {
        assert_eq!(get(&addr, "/api/sweeps", &[("Host", &host)]).await.status, 200, "{host}");
    }
    for host in [format!("rebound.evil.example:{port}"), "dash.example".into(), String::new()] {
        let r = get(&addr, "/api/sweeps", &[("Host", &host)]).await;
        assert_eq!(r.status, 421, "{host:?}");
        assert!(r.body.contains("--http-host"), "{}", r.body);
        assert!(!r.body.contains('['), "no data: {}", r.body);
    }
    assert_eq!(get(&addr, "/login", &[("Host", "evil.example")]).await.status, 421, "the login form too");

    let mut named = open;
    named.dashboard.hosts = vec!["dash.example".into()];
    let (_, addr) = start_with(named).await;
    assert_eq!(get(&addr, "/api/sweeps", &[("Host", "dash.example:443")]).await.status, 200);
    assert_eq!(get(&addr, "/api/sweeps", &[("Host", "other.example")]).await.status, 421);
}

/// Open event streams are capped; one more is answered 503 (the browser
/// tries again later), and a closed one frees its place.
#[tokio::test]
async fn event_streams_beyond_the_cap_are_refused() {
    let mut options = CoordinatorOptions::default();
    options.dashboard.event_streams = 2;
    let (_, addr) = start_with(options).await;
    let open = |addr: String| async move {
        let mut s = TcpStream::connect(&addr).await.unwrap();
        s.write_all(format!("GET /events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).await.unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).await.unwrap();
        (s, String::from_utf8_lossy(&head).to_string())
    };
    let (first, head) = open(addr.clone()).await;
    assert_eq!(head, "HTTP/1.1 200");
    let (_second, head) = open(addr.clone()).await;
    assert_eq!(head, "HTTP/1.1 200");
    let third = get(&addr, "/events", &[]).await;
    assert_eq!(third.status, 503);
    assert!(third.header("retry-after").is_some());
    drop(first);
    // The server sees the close at its next write (a change or keep-alive).
    let mut again = 0;
    for _ in 0..100 {
        let (_s, head) = open(addr.clone()).await;
        if head == "HTTP/1.1 200" {
            again += 1;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(again, 1, "a closed stream's place is taken again");
}

/// A request head must arrive whole within the deadline (10 s), and an idle
/// keep-alive connection is closed then too: such connections had been
/// kept for ever. On tokio's paused clock.
#[tokio::test(start_paused = true)]
async fn a_half_sent_request_is_closed_at_the_header_deadline() {
    let (_, addr) = start_with(CoordinatorOptions::default()).await;
    let began = tokio::time::Instant::now();
    let mut half = TcpStream::connect(&addr).await.unwrap();
    half.write_all(format!("GET /api/sweeps HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes()).await.unwrap();
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    idle.write_all(format!("GET /api/sweeps HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).await.unwrap();
    for (name, mut s) in [("half-sent", half), ("idle keep-alive", idle)] {
        let mut got = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut got)).await;
        assert!(read.is_ok(), "the {name} connection is closed");
        let waited = began.elapsed();
        assert!(waited >= Duration::from_secs(10) && waited < Duration::from_secs(15), "{name}: {waited:?}");
        if name == "idle keep-alive" {
            assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200"), "answered first");
        }
    }
}

/// The page's live updates: a poll without `since` answers at once, one
/// with the current version waits (here its 1 s timeout) and answers the
/// same, and a change ends the wait at once with a new version.
#[tokio::test]
async fn a_change_poll_waits_for_a_change_or_its_timeout() {
    let (url, addr) = start_with(CoordinatorOptions::default()).await;
    let version = |r: &Response| serde_json::from_str::<serde_json::Value>(&r.body).unwrap()["version"].as_u64();
    let first = get(&addr, "/api/changes", &[]).await;
    assert_eq!(first.status, 200);
    let v = version(&first).unwrap();
    let began = std::time::Instant::now();
    let idle = get(&addr, &format!("/api/changes?since={v}&timeout=1"), &[]).await;
    assert!(began.elapsed() >= Duration::from_millis(900), "waited {:?}", began.elapsed());
    assert_eq!(version(&idle), Some(v), "nothing changed");

    let poll = tokio::spawn({
        let addr = addr.clone();
        async move { get(&addr, &format!("/api/changes?since={v}"), &[]).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let channel = tonic::transport::Endpoint::from_shared(url).unwrap().connect().await.unwrap();
    let mut sweeps = SweepsClient::new(channel);
    let began = std::time::Instant::now();
    sweeps.submit(pb::SubmitRequest { spec_toml: SPEC.to_string(), resume: false, no_reuse: false }).await.unwrap();
    let changed = poll.await.unwrap();
    assert!(version(&changed).unwrap() != v, "{}", changed.body);
    // (The read helper waits 1.5 s for more bytes after the answer.)
    assert!(began.elapsed() < Duration::from_secs(5), "not at its 20 s timeout: {:?}", began.elapsed());
}

/// A coordinator over a database file with a dashboard, stopped by `stop`.
async fn start_on(
    path: &std::path::Path,
) -> (String, String, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let options = CoordinatorOptions { http: Some(http), ..Default::default() };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let store = Store::open(path).unwrap();
    let task = tokio::spawn(async move {
        serve(listener, store, options, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    for _ in 0..200 {
        if TcpStream::connect(http).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (url, http.to_string(), stop, task)
}

/// A worker registered on `url`: (id, nonce, session secret).
async fn worker_on(url: &str, name: &str) -> (WorkersClient<tonic::transport::Channel>, u64, u64, Vec<u8>) {
    let channel = tonic::transport::Endpoint::from_shared(url.to_string()).unwrap().connect().await.unwrap();
    let mut workers = WorkersClient::new(channel);
    let register = pb::RegisterRequest {
        protocol_version: PROTOCOL_VERSION,
        name: name.into(),
        threads: 1,
        memory_bytes: Some(1 << 30),
        ..Default::default()
    };
    let r = workers.register(register).await.unwrap().into_inner();
    (workers, r.worker_id, r.coordinator_nonce, r.session_secret)
}

/// A worker from before a restart is listed gone with the tasks and CPU
/// time its results hold (they had been lost); a live one shows its
/// memory budget and the board it runs; the CSV download holds the rows.
#[tokio::test]
async fn gone_workers_keep_their_totals_and_live_ones_show_their_board() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let (url, _, stop, task) = start_on(&path).await;
    let channel = tonic::transport::Endpoint::from_shared(url.clone()).unwrap().connect().await.unwrap();
    let id = SweepsClient::new(channel)
        .submit(pb::SubmitRequest { spec_toml: SPEC.to_string(), resume: false, no_reuse: false })
        .await
        .unwrap()
        .into_inner()
        .sweep_id;
    let (mut workers, worker, nonce, secret) = worker_on(&url, "embedded-1").await;
    let poll = |free: u32, running: Vec<pb::LeaseRef>, results: Vec<pb::ShardResults>| pb::PollRequest {
        worker_id: worker,
        coordinator_nonce: nonce,
        free_slots: free,
        running,
        results,
        session_secret: secret.clone(),
        ..Default::default()
    };
    let shard = workers.poll(poll(1, vec![], vec![])).await.unwrap().into_inner().shards[0].clone();
    let lease = pb::LeaseRef { shard_id: shard.shard_id, epoch: shard.epoch };
    let tasks = (0..3)
        .map(|start_offset| pb::TaskOutcome {
            start_offset,
            method_index: 0,
            success: false,
            attempts: 1,
            visited: 3,
            micros: 1000,
            outcome: pb::Outcome::GaveUp as i32,
            ..Default::default()
        })
        .collect();
    let results = vec![pb::ShardResults { shard_id: shard.shard_id, epoch: shard.epoch, tasks, ..Default::default() }];
    workers.poll(poll(0, vec![lease], results)).await.unwrap();
    let _ = stop.send(());
    task.await.unwrap();

    let (url, addr, _stop, _task) = start_on(&path).await;
    let (mut after, worker2, nonce2, secret2) = worker_on(&url, "embedded-2").await;
    let req = pb::PollRequest {
        worker_id: worker2,
        coordinator_nonce: nonce2,
        free_slots: 1,
        session_secret: secret2.clone(),
        ..Default::default()
    };
    let held = after.poll(req).await.unwrap().into_inner().shards;
    assert!(!held.is_empty(), "the new worker is given a shard");

    let w: serde_json::Value = serde_json::from_str(&get(&addr, "/api/workers", &[]).await.body).unwrap();
    let list = w["workers"].as_array().unwrap();
    let gone = list.iter().find(|w| w["name"] == "embedded-1").expect("the earlier worker is listed");
    assert_eq!(gone["state"], "gone");
    assert_eq!((gone["tasks"].as_u64(), gone["cpu_micros"].as_u64()), (Some(3), Some(3000)), "{gone}");
    assert_eq!(gone["cpu_text"], "3 ms");
    let alive = list.iter().find(|w| w["name"] == "embedded-2").unwrap();
    assert_eq!((alive["state"].as_str(), alive["memory_text"].as_str()), (Some("alive"), Some("1.0 GiB")));
    let boards = alive["boards"].as_array().unwrap();
    assert_eq!(boards.len(), 1, "{alive}");
    assert!(["5x5", "6x6"].contains(&boards[0]["shape"].as_str().unwrap()), "{alive}");
    assert_eq!((boards[0]["moves"].as_str(), boards[0]["sweep"].as_str()), (Some("2,1"), Some("dash")));

    // The download still holds every row (the body comes in chunks).
    let csv = get(&addr, &format!("/sweeps/{id}/results.csv"), &[]).await;
    assert_eq!(csv.status, 200);
    assert!(csv.body.contains("sweep,rule,moves,dims,n,shape,method,start,success"), "{}", csv.body);
    let rows = csv
        .body
        .lines()
        .filter(|l| {
            l.starts_with(&format!("{id},\"2,1\",")) && l.contains(",2,5,\"[5,5]\",") && l.contains(",embedded-1,")
        })
        .count();
    assert_eq!(rows, 3, "{}", csv.body);
}
