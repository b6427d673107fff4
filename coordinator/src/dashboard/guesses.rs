//! Wrong tokens shown to the dashboard (the login form, a bearer header, a
//! cookie or a `?token=` link), limited per source and in all, so a token
//! cannot be guessed at the speed of the loop (issue 58: 300 guesses in
//! 0.04 s). A limited source is answered 429 before its token is looked at:
//! checking it would tell a right guess from a wrong one at full speed.
//!
//! A source is an IPv4 address or an IPv6 /64 (what one host is usually
//! given). One that has shown no wrong token lately is never refused, so a
//! guesser elsewhere locks nobody with the right token out; once it has,
//! both its own bucket and the one of all sources bound it.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::time::{Duration, Instant};

use crate::bucket::{RateLimit, TokenBucket};

/// Sources whose wrong tokens are tracked at once; past it, the ones whose
/// buckets have refilled are dropped, and a source new then is bound by
/// the bucket of all sources from its first guess.
const MAX_SOURCES: usize = 16_384;

/// Wrong tokens per source and from all of them.
pub(crate) struct Guesses {
    per_source: RateLimit,
    everyone: TokenBucket,
    sources: HashMap<IpAddr, TokenBucket>,
}

/// The key a peer's address is counted under.
fn source(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

impl Guesses {
    pub fn new(per_source: RateLimit, everyone: RateLimit, now: Instant) -> Guesses {
        Guesses { per_source, everyone: TokenBucket::full(everyone, now), sources: HashMap::new() }
    }

    /// Whether a token from `peer` may be checked now; if not, how long
    /// until one may.
    pub fn admit(&mut self, peer: IpAddr, now: Instant) -> Result<(), Duration> {
        let key = source(peer);
        let tracked = self.sources.len();
        let own = match self.sources.get_mut(&key).map(|bucket| (bucket.is_full(now), bucket.wait(now))) {
            Some((true, _)) => {
                self.sources.remove(&key);
                return Ok(());
            }
            Some((false, wait)) => wait,
            None if tracked < MAX_SOURCES => return Ok(()),
            None => None,
        };
        match own.max(self.everyone.wait(now)) {
            Some(wait) => Err(wait),
            None => Ok(()),
        }
    }

    /// A wrong token from `peer`. True when its next would be refused.
    pub fn failed(&mut self, peer: IpAddr, now: Instant) -> bool {
        let _ = self.everyone.take(now);
        let key = source(peer);
        if self.sources.len() >= MAX_SOURCES && !self.sources.contains_key(&key) {
            self.sources.retain(|_, bucket| !bucket.is_full(now));
        }
        if self.sources.len() < MAX_SOURCES || self.sources.contains_key(&key) {
            let per_source = self.per_source;
            let _ = self.sources.entry(key).or_insert_with(|| TokenBucket::full(per_source, now)).take(now);
        }
        self.admit(peer, now).is_err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PER_SOURCE: RateLimit = RateLimit { burst: 3, every: Duration::from_secs(6) };
    const EVERYONE: RateLimit = RateLimit { burst: 5, every: Duration::from_secs(1) };

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_source_is_limited_after_its_burst_and_others_are_not() {
        let t0 = Instant::now();
        let mut g = Guesses::new(PER_SOURCE, EVERYONE, t0);
        for i in 0..3 {
            assert_eq!(g.admit(ip("10.0.0.1"), t0), Ok(()));
            assert_eq!(g.failed(ip("10.0.0.1"), t0), i == 2, "limited after the third");
        }
        assert_eq!(g.admit(ip("10.0.0.1"), t0), Err(Duration::from_secs(6)));
        assert_eq!(g.admit(ip("::ffff:10.0.0.1"), t0), Err(Duration::from_secs(6)), "the same host");
        assert_eq!(g.admit(ip("10.0.0.2"), t0), Ok(()));
        assert_eq!(g.admit(ip("10.0.0.1"), t0 + Duration::from_secs(6)), Ok(()), "one more each 6 s");
        g.failed(ip("10.0.0.1"), t0 + Duration::from_secs(6));
        assert!(g.admit(ip("10.0.0.1"), t0 + Duration::from_secs(6)).is_err());
        // Refilled, the source is forgotten.
        assert_eq!(g.admit(ip("10.0.0.1"), t0 + Duration::from_secs(60)), Ok(()));
        assert!(g.sources.is_empty());
    }

    #[test]
    fn all_sources_together_are_limited_but_clean_ones_are_not_refused() {
        let t0 = Instant::now();
        let mut g = Guesses::new(PER_SOURCE, EVERYONE, t0);
        // Five hosts of one /64 are one source; five /64s are five.
        for i in 0..5 {
            g.failed(ip(&format!("2001:db8:0:{i}::1")), t0);
        }
        assert_eq!(g.admit(ip("2001:db8:0:0::2"), t0), Err(Duration::from_secs(1)), "all sources' burst used");
        assert_eq!(g.admit(ip("2001:db8:0:9::1"), t0), Ok(()), "a source with no wrong token is let through");
        assert_eq!(g.admit(ip("2001:db8:0:0::2"), t0 + Duration::from_secs(1)), Ok(()));
    }

    #[test]
    fn sources_tracked_are_bounded() {
        let t0 = Instant::now();
        let mut g = Guesses::new(PER_SOURCE, RateLimit { burst: u32::MAX, every: Duration::ZERO }, t0);
        for i in 0..MAX_SOURCES as u32 + 10 {
            g.failed(IpAddr::V4(i.into()), t0);
        }
        assert_eq!(g.sources.len(), MAX_SOURCES);
        // Refilled ones make room.
        g.failed(ip("192.0.2.1"), t0 + Duration::from_secs(60));
        assert_eq!(g.sources.len(), 1);
    }
}
