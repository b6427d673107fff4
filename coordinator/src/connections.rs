//! Accepting connections without letting idle ones starve real clients:
//! a bounded number open at once (a semaphore, as mini-redis bounds its
//! connections), a deadline for the first bytes and for silence after them,
//! and a backoff when `accept` itself fails (out of file descriptors), so
//! the accept loop never spins. The gRPC port and the dashboard's each have
//! their own.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::{sleep, Instant, Sleep};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// Bounds on the connections a coordinator keeps.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Connections open at once; more wait in the kernel's backlog.
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
    let (tx, rx) = mpsc::channel(16);
    let permits = Arc::new(Semaphore::new(limits.max.max(1)));
    let task = tokio::spawn(async move {
        let mut backoff = FIRST_BACKOFF;
        loop {
            // A free slot first: at the limit, new clients wait in the backlog.
            let Ok(permit) = permits.clone().acquire_owned().await else { return };
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
            let _ = stream.set_nodelay(true);
            let conn = LimitedConnection {
                stream,
                _permit: permit,
                deadline: Box::pin(sleep(limits.handshake)),
                idle: limits.idle,
                writes_count: false,
                liveness,
            };
            if tx.send(Ok(conn)).await.is_err() {
                return; // the server stopped
            }
        }
    });
    (rx, task)
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
}

impl LimitedConnection {
    /// Puts the deadline off by the idle limit.
    fn heard(&mut self) {
        let next = Instant::now() + self.idle;
        self.deadline.as_mut().reset(next);
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
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.wrote(&written);
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

impl Connected for LimitedConnection {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.stream.connect_info()
    }
}
