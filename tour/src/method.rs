//! The tour methods of SPEC.md and the walks each one makes.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::walk::Tiebreak;

/// A tour method, named as SPEC.md and the report name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// One walk by rule W.
    W,
    /// One walk by rule W+ (Roth's centre-distance tiebreak).
    WPlus,
    /// W walks with the move order rotated r = 0..K-1; first success stops.
    Aw,
    /// The same with rule W+.
    AwPlus,
    /// For each rotation r: a W walk, then a W+ walk; first success stops.
    Mw,
    /// One walk, ties broken uniformly at random (seeded).
    Wr,
    /// One walk, ties by distance, then uniformly at random (seeded).
    WrPlus,
}

const KNOWN: &str = "w, w+, aw, aw+, mw, wr, wr+";

impl Method {
    /// Every method, in the order tables list them.
    pub const ALL: [Method; 7] =
        [Method::W, Method::WPlus, Method::Aw, Method::AwPlus, Method::Mw, Method::Wr, Method::WrPlus];

    /// The method's name as users and result files write it.
    pub fn name(self) -> &'static str {
        match self {
            Method::W => "w",
            Method::WPlus => "w+",
            Method::Aw => "aw",
            Method::AwPlus => "aw+",
            Method::Mw => "mw",
            Method::Wr => "wr",
            Method::WrPlus => "wr+",
        }
    }

    /// True for the methods that draw from the task's random stream.
    pub fn is_random(self) -> bool {
        matches!(self, Method::Wr | Method::WrPlus)
    }

    /// Most walks the method makes with K moves.
    pub fn max_attempts(self, k: usize) -> usize {
        match self {
            Method::W | Method::WPlus | Method::Wr | Method::WrPlus => 1,
            Method::Aw | Method::AwPlus => k,
            Method::Mw => 2 * k,
        }
    }

    /// The `attempt`-th walk (0-based) as (rotation, tiebreak); `attempt`
    /// must be below `max_attempts(k)`.
    pub fn attempt(self, attempt: usize) -> (usize, Tiebreak) {
        match self {
            Method::W => (0, Tiebreak::First),
            Method::WPlus => (0, Tiebreak::Distance),
            Method::Wr => (0, Tiebreak::Random),
            Method::WrPlus => (0, Tiebreak::DistanceRandom),
            Method::Aw => (attempt, Tiebreak::First),
            Method::AwPlus => (attempt, Tiebreak::Distance),
            Method::Mw => (attempt / 2, if attempt.is_multiple_of(2) { Tiebreak::First } else { Tiebreak::Distance }),
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;

    /// Parses a method name, case-insensitively (`AW+` = `aw+`).
    fn from_str(s: &str) -> Result<Method, Error> {
        let lower = s.trim().to_ascii_lowercase();
        Method::ALL
            .into_iter()
            .find(|m| m.name() == lower)
            .ok_or_else(|| Error::UnknownMethod { name: s.to_string(), known: KNOWN })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
        }
        assert_eq!("AW+".parse::<Method>().unwrap(), Method::AwPlus);
        let e = "warnsdorff".parse::<Method>().unwrap_err();
        assert_eq!(e.field(), "method");
        assert!(e.to_string().contains("aw+"));
    }

    #[test]
    fn mw_alternates_w_and_w_plus_per_rotation() {
        let seq: Vec<_> = (0..4).map(|a| Method::Mw.attempt(a)).collect();
        assert_eq!(seq, [(0, Tiebreak::First), (0, Tiebreak::Distance), (1, Tiebreak::First), (1, Tiebreak::Distance)]);
        assert_eq!(Method::Mw.max_attempts(8), 16);
    }
}
