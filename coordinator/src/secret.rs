//! Unguessable secrets, from the operating system's random source: each
//! worker registration's session secret (so knowing a worker's id, or the
//! shared token, is not enough to poll as that worker) and the token of an
//! embedded run.

use crate::error::{Error, Result};

/// Bytes of a session secret: 128 bits.
pub const SECRET_BYTES: usize = 16;

/// A registration's secret, presented on every poll and goodbye.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SessionSecret([u8; SECRET_BYTES]);

impl std::fmt::Debug for SessionSecret {
    /// Never prints the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionSecret(..)")
    }
}

impl SessionSecret {
    /// A fresh secret.
    pub fn new() -> Result<SessionSecret> {
        Ok(SessionSecret(random()?))
    }

    /// The bytes sent to the worker, once, in its registration reply.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// True when `presented` is this secret; compares without an early
    /// exit, so timing does not leak it.
    pub fn matches(&self, presented: &[u8]) -> bool {
        constant_time_eq(&self.0, presented)
    }
}

/// A token for a coordinator that only this process talks to (`ksweep
/// run`): 128 random bits, as 32 hex digits.
pub fn random_token() -> Result<String> {
    Ok(random::<SECRET_BYTES>()?.iter().map(|b| format!("{b:02x}")).collect())
}

fn random<const N: usize>() -> Result<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::getrandom(&mut bytes).map_err(|e| Error::Internal(format!("no random source: {e}")))?;
    Ok(bytes)
}

/// Compares without an early exit, so timing does not leak a secret.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_differ_and_match_only_themselves() {
        let (a, b) = (SessionSecret::new().unwrap(), SessionSecret::new().unwrap());
        assert_ne!(a, b);
        assert!(a.matches(a.as_bytes()));
        assert!(!a.matches(b.as_bytes()));
        assert!(!a.matches(&a.as_bytes()[..15]));
        assert!(!a.matches(b""));
        assert_eq!(format!("{a:?}"), "SessionSecret(..)");
        let t = random_token().unwrap();
        assert_eq!(t.len(), 32);
        assert_ne!(t, random_token().unwrap());
    }
}
