//! The shutdown signals of the long-running commands: ctrl-c (SIGINT) or
//! SIGTERM, and the exit status a command they interrupted ends with.

use std::fmt;

/// A signal that asks the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C: SIGINT.
    Interrupt,
    /// SIGTERM, as sent by `kill`, Docker and Slurm.
    Terminate,
}

impl Signal {
    /// The shells' convention for a process ended by a signal: 128 + its number.
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Interrupt => 130,
            Signal::Terminate => 143,
        }
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Signal::Interrupt => "interrupted",
            Signal::Terminate => "terminated",
        })
    }
}

/// The error of a command that a signal stopped before it finished; `main`
/// exits with [`Signal::exit_code`].
#[derive(Debug)]
pub struct Interrupted {
    /// What stopped the command.
    pub signal: Signal,
    /// What the user can do about it.
    pub message: String,
}

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.signal, self.message)
    }
}

impl std::error::Error for Interrupted {}

/// The signal handlers, installed when this is created: a signal that
/// arrives before [`Signals::recv`] is polled is kept, not fatal.
pub struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers; needs a tokio runtime.
    pub fn install() -> std::io::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Signals { interrupt: signal(SignalKind::interrupt())?, terminate: signal(SignalKind::terminate())? })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// The shutdown future of the services, which stop cleanly (exit 0)
    /// when asked to.
    pub async fn shutdown(mut self) {
        self.recv().await;
    }

    /// Completes with the first signal that arrives.
    pub async fn recv(&mut self) -> Signal {
        #[cfg(unix)]
        let signal = tokio::select! {
            _ = self.interrupt.recv() => Signal::Interrupt,
            _ = self.terminate.recv() => Signal::Terminate,
        };
        #[cfg(not(unix))]
        let signal = {
            let _ = tokio::signal::ctrl_c().await;
            Signal::Interrupt
        };
        tracing::info!("{signal}; shutting down");
        signal
    }
}
