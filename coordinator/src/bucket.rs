//! A token bucket, what the coordinator's rate limits are made of (wrong
//! dashboard tokens, worker registrations). Time is passed in, so the
//! limits are tested without sleeping.

use std::time::{Duration, Instant};

/// Up to `burst` at once, then one each `every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub burst: u32,
    pub every: Duration,
}

impl RateLimit {
    /// How often, for messages: "1000 at once, then 100 a second".
    pub(crate) fn describe(&self) -> String {
        let per_second = 1.0 / self.every.as_secs_f64().max(f64::MIN_POSITIVE);
        if per_second >= 1.0 {
            format!("{} at once, then {per_second:.0} a second", self.burst)
        } else {
            format!("{} at once, then one each {:?}", self.burst, self.every)
        }
    }
}

/// A bucket of `burst` tokens, refilled one each `every`.
#[derive(Debug, Clone)]
pub(crate) struct TokenBucket {
    limit: RateLimit,
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    pub fn full(limit: RateLimit, now: Instant) -> TokenBucket {
        TokenBucket { limit, tokens: f64::from(limit.burst), at: now }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.at = self.at.max(now);
        let every = self.limit.every.as_secs_f64();
        let gained = if every > 0.0 { elapsed / every } else { f64::INFINITY };
        self.tokens = (self.tokens + gained).min(f64::from(self.limit.burst));
    }

    /// How long until a token is there; None when one is now.
    pub fn wait(&mut self, now: Instant) -> Option<Duration> {
        self.refill(now);
        (self.tokens < 1.0).then(|| self.limit.every.mul_f64(1.0 - self.tokens))
    }

    /// Takes a token, or says how long until one is there.
    pub fn take(&mut self, now: Instant) -> Result<(), Duration> {
        match self.wait(now) {
            Some(wait) => Err(wait),
            None => {
                self.tokens -= 1.0;
                Ok(())
            }
        }
    }

    /// Refilled to its burst: as if never used.
    pub fn is_full(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens >= f64::from(self.limit.burst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_one_each_period() {
        let t0 = Instant::now();
        let limit = RateLimit { burst: 3, every: Duration::from_secs(2) };
        let mut b = TokenBucket::full(limit, t0);
        assert!((0..3).all(|_| b.take(t0).is_ok()));
        assert_eq!(b.take(t0), Err(Duration::from_secs(2)));
        let t1 = t0 + Duration::from_millis(1500);
        assert_eq!(b.take(t1), Err(Duration::from_millis(500)));
        assert_eq!(b.take(t0 + Duration::from_secs(2)), Ok(()));
        assert!(b.take(t0 + Duration::from_secs(2)).is_err());
        assert!(!b.is_full(t0 + Duration::from_secs(7)));
        assert!(b.is_full(t0 + Duration::from_secs(8)));
        assert!((0..3).all(|_| b.take(t0 + Duration::from_secs(100)).is_ok()), "never more than the burst");
        assert!(b.take(t0 + Duration::from_secs(100)).is_err());
        // A clock read before the last one (another thread's) takes nothing back.
        assert!(b.take(t0).is_err());
    }

    #[test]
    fn limits_describe_themselves() {
        let a = RateLimit { burst: 1000, every: Duration::from_millis(10) };
        assert_eq!(a.describe(), "1000 at once, then 100 a second");
        let b = RateLimit { burst: 10, every: Duration::from_secs(6) };
        assert_eq!(b.describe(), "10 at once, then one each 6s");
    }
}
