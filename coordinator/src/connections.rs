//! Accepting connections without letting idle or hostile ones starve real
//! clients: a bounded number open at once (a semaphore, as mini-redis
//! bounds its connections), a deadline for the first bytes and for silence
//! after them, and a backoff when `accept` itself fails (out of file
//! descriptors), so the accept loop never spins. The gRPC port and the
//! dashboard's each have their own.
//!
//! A connection is a newcomer until a request on it passes the token check
//! ([`ConnectionInfo::prove`]). When every slot is taken and another peer
//! connects, the oldest newcomer is closed to make room: were the loop to
//! wait for a slot instead, a churn of sockets without the token would keep
//! every slot and the kernel's backlog full, and a client's connection
//! would wait there, or its SYN be dropped and sent again after 1, 3 and
//! 7 s (issue 58: 6-9 s under 1,100 churning sockets).

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::task::JoinHandle;
use tokio::time::{sleep, Instant, Sleep};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// Bounds on the connections a coordinator keeps.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Connections open at once. At the limit a new one takes the slot of
    /// the oldest that has not yet made a call with the token; when every
    /// one has, new ones wait in the kernel's backlog.
    pub max: usize,
    /// A connection that sends nothing this long after it is accepted (no
    /// HTTP/2 handshake) is closed.
    pub handshake: Duration,
    /// A connection silent this long is closed. The server pings every
    /// client well within it (HTTP/2 keepalive), so only dead or hostile
    /// peers stay silent.
    pub idle: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits { max: 1024, handshake: Duration::from_secs(10), idle: Duration::from_secs(120) }
    }
}

/// What counts as a connection not being silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// Bytes from the peer. The gRPC server pings its clients, so a live
    /// one always answers within the idle limit.
    PeerSends,
    /// Bytes either way once the peer has sent its first: a dashboard's
    /// event stream or download only sends, for minutes, while a client
    /// that stopped reading (writes blocked) still falls silent.
    EitherWay,
}

/// Connections the kernel may hold ready to be accepted (capped by
/// `net.core.somaxconn`). Rust's listeners ask for 128: a thousand workers
/// starting at once overflowed it, and each one dropped sent its SYN again
/// a second later.
const BACKLOG: i32 = 1024;

/// The first pause after a failed `accept`; doubles up to `MAX_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Accepts on `listener` in a task of its own, within `limits`; the
/// connections come out of the returned channel (for
/// `serve_with_incoming_shutdown`). Abort the task when the server stops.
pub fn accept(
    listener: TcpListener,
    limits: ConnectionLimits,
    liveness: Liveness,
) -> (mpsc::Receiver<io::Result<LimitedConnection>>, JoinHandle<()>) {
    // Listening again only sets the backlog.
    if let Err(e) = rustix::net::listen(&listener, BACKLOG) {
        tracing::warn!(error = %e, "cannot raise the listening socket's backlog");
    }
    let (tx, rx) = mpsc::channel(16);
    let permits = Arc::new(Semaphore::new(limits.max.max(1)));
    let newcomers = Arc::new(Mutex::new(Newcomers::default()));
    let task = tokio::spawn(async move {
        let mut backoff = FIRST_BACKOFF;
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => {
                    backoff = FIRST_BACKOFF;
                    stream
                }
                Err(e) => {
                    tracing::warn!(error = %e, retry_in = ?backoff, "accept failed");
                    sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
            let permit = match permits.clone().try_acquire_owned() {
                Ok(permit) => permit,
                Err(TryAcquireError::Closed) => return,
                Err(TryAcquireError::NoPermits) => {
                    // Room made by the oldest newcomer; with none (every
                    // slot a client's), this one waits for a slot, and the
                    // next ones in the backlog.
                    if lock(&newcomers).evict_oldest() {
                        tracing::debug!(max = limits.max, "every connection slot taken: the oldest newcomer closed");
                    }
                    let Ok(permit) = permits.clone().acquire_owned().await else { return };
                    permit
                }
            };
            let _ = stream.set_nodelay(true);
            let (id, eviction) = lock(&newcomers).arrive();
            let conn = LimitedConnection {
                stream,
                _permit: permit,
                deadline: Box::pin(sleep(limits.handshake)),
                idle: limits.idle,
                writes_count: false,
                liveness,
                eviction: Some(eviction),
                standing: Arc::new(Standing { id, proven: AtomicBool::new(false), newcomers: newcomers.clone() }),
            };
            if tx.send(Ok(conn)).await.is_err() {
                return; // the server stopped
            }
        }
    });
    (rx, task)
}

fn lock(newcomers: &Mutex<Newcomers>) -> MutexGuard<'_, Newcomers> {
    newcomers.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The connections that have not yet made a call with the token, oldest
/// first, each with the sender that closes it.
#[derive(Default)]
struct Newcomers {
    next: u64,
    open: BTreeMap<u64, oneshot::Sender<()>>,
}

impl Newcomers {
    /// A new connection's id, and what tells it it was evicted.
    fn arrive(&mut self) -> (u64, oneshot::Receiver<()>) {
        let id = self.next;
        self.next += 1;
        let (evict, eviction) = oneshot::channel();
        self.open.insert(id, evict);
        (id, eviction)
    }

    /// Closes the oldest newcomer still open; false when there is none.
    fn evict_oldest(&mut self) -> bool {
        while let Some((_, evict)) = self.open.pop_first() {
            if evict.send(()).is_ok() {
                return true;
            }
        }
        false
    }
}

/// A connection's standing: a newcomer until a call on it passes the token
/// check.
struct Standing {
    id: u64,
    proven: AtomicBool,
    newcomers: Arc<Mutex<Newcomers>>,
}

impl Standing {
    fn leave_newcomers(&self) {
        lock(&self.newcomers).open.remove(&self.id);
    }
}

/// What a request's handlers may know of its connection (tonic puts it in
/// the request's extensions; the dashboard does the same): the peer's
/// address, and the means to mark the connection a client's.
#[derive(Clone)]
pub struct ConnectionInfo {
    tcp: TcpConnectInfo,
    standing: Arc<Standing>,
}

impl ConnectionInfo {
    pub fn remote_addr(&self) -> Option<SocketAddr> {
        self.tcp.remote_addr()
    }

    /// Marks the connection as a client's, once a request on it passed the
    /// token check (any request, when no token is set): no newcomer takes
    /// its slot from then on.
    pub fn prove(&self) {
        if !self.standing.proven.swap(true, Ordering::Relaxed) {
            self.standing.leave_newcomers();
        }
    }
}

/// An accepted connection holding its slot until dropped, and closed once
/// its peer stays silent past the deadline.
pub struct LimitedConnection {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    /// The handshake deadline, then the idle one, reset by every read.
    deadline: Pin<Box<Sleep>>,
    idle: Duration,
    /// Writes put the deadline off too (`EitherWay`, once the peer spoke).
    writes_count: bool,
    liveness: Liveness,
    /// Fires when a newer connection takes this one's slot; None once the
    /// connection is proven (its sender is dropped then).
    eviction: Option<oneshot::Receiver<()>>,
    standing: Arc<Standing>,
}

impl Drop for LimitedConnection {
    fn drop(&mut self) {
        if !self.standing.proven.load(Ordering::Relaxed) {
            self.standing.leave_newcomers();
        }
    }
}

impl LimitedConnection {
    /// Puts the deadline off by the idle limit.
    fn heard(&mut self) {
        let next = Instant::now() + self.idle;
        self.deadline.as_mut().reset(next);
    }

    /// The error that closes the connection if a newer one took its slot.
    fn evicted(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        let eviction = self.eviction.as_mut()?;
        match Pin::new(eviction).poll(cx) {
            Poll::Ready(Ok(())) => Some(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "every slot taken: closed for a newer connection",
            )),
            Poll::Ready(Err(_)) => {
                self.eviction = None; // proven
                None
            }
            Poll::Pending => None,
        }
    }

    /// Counts bytes written as life, where writes count.
    fn wrote(&mut self, written: &Poll<io::Result<usize>>) {
        if self.writes_count && matches!(written, Poll::Ready(Ok(n)) if *n > 0) {
            self.heard();
        }
    }
}

impl AsyncRead for LimitedConnection {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if let Some(e) = self.evicted(cx) {
            return Poll::Ready(Err(e));
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.heard();
                    self.writes_count = self.liveness == Liveness::EitherWay;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => match self.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "peer silent too long"))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for LimitedConnection {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if let Some(e) = self.evicted(cx) {
            return Poll::Ready(Err(e));
        }
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.wrote(&written);
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.evicted(cx) {
            return Poll::Ready(Err(e));
        }
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.wrote(&written);
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

impl Connected for LimitedConnection {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> ConnectionInfo {
        ConnectionInfo { tcp: self.stream.connect_info(), standing: self.standing.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_open_newcomer_is_evicted_and_the_proven_never() {
        let mut newcomers = Newcomers::default();
        let (a, mut a_evicted) = newcomers.arrive();
        let (_, b_evicted) = newcomers.arrive();
        let (_, mut c_evicted) = newcomers.arrive();
        let (_, mut d_evicted) = newcomers.arrive();
        newcomers.open.remove(&a); // proven
        drop(b_evicted); // closed by itself
        assert!(newcomers.evict_oldest());
        assert_eq!(c_evicted.try_recv(), Ok(()), "the oldest still open");
        assert!(a_evicted.try_recv().is_err(), "proven: its sender is gone, nothing sent");
        assert_eq!(d_evicted.try_recv(), Err(oneshot::error::TryRecvError::Empty));
        assert!(newcomers.evict_oldest());
        assert_eq!(d_evicted.try_recv(), Ok(()));
        assert!(!newcomers.evict_oldest(), "no newcomer left");
    }

    /// With every slot a proven client's, connections wait in the kernel's
    /// queue: 600 connect at once, none waiting for its SYN to be sent
    /// again (with Rust's backlog of 128, most would).
    #[tokio::test]
    async fn hundreds_connecting_at_once_wait_in_the_kernels_queue() {
        let somaxconn: usize = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(4096);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let limits = ConnectionLimits { max: 1, ..ConnectionLimits::default() };
        let (mut incoming, acceptor) = accept(listener, limits, Liveness::PeerSends);
        let _client = TcpStream::connect(addr).await.unwrap();
        let held = incoming.recv().await.unwrap().unwrap();
        held.connect_info().prove();
        let mut connects = tokio::task::JoinSet::new();
        for _ in 0..600.min(somaxconn.saturating_sub(1)) {
            connects.spawn(tokio::time::timeout(Duration::from_millis(800), TcpStream::connect(addr)));
        }
        let waited = connects.join_all().await.iter().filter(|c| !matches!(c, Ok(Ok(_)))).count();
        assert_eq!(waited, 0, "connections not queued");
        acceptor.abort();
    }
}
