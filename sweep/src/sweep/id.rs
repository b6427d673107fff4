//! A sweep's content id.

use sha2::{Digest, Sha256};

use super::ConfigEntry;
use crate::precision::Precision;
use crate::spec::SweepSpec;

/// SHA-256 over a stream of words and length-prefixed byte strings: the
/// sweep id must not be forgeable (a different spec with a victim's id).
pub(super) struct IdHasher(Sha256);

impl IdHasher {
    pub(super) fn new(domain: &[u8]) -> IdHasher {
        let mut h = IdHasher(Sha256::new());
        h.bytes(domain);
        h
    }

    pub(super) fn word(&mut self, w: u64) -> &mut Self {
        self.0.update(w.to_le_bytes());
        self
    }

    pub(super) fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.word(b.len() as u64);
        self.0.update(b);
        self
    }

    /// The first 8 bytes of the digest as 16 hex digits: 64 bits, so
    /// forging a spec for a given id takes about 2^64 hashes.
    pub(super) fn finish(self) -> String {
        self.0.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The sweep id: a hash of everything that decides its results.
pub(super) fn content_id(spec: &SweepSpec, configurations: &[ConfigEntry], precision: Option<&Precision>) -> String {
    let mut h = IdHasher::new(b"knight-sweep id v2");
    h.bytes(spec.name.as_bytes()).word(spec.seed).word(spec.starts).word(spec.methods.len() as u64);
    for m in &spec.methods {
        h.bytes(m.name().as_bytes());
    }
    // Budgets change results; written only when set, so specs without them
    // keep the ids they had before these options existed.
    if let Some(b) = spec.budget {
        h.bytes(b"budget").word(b);
    }
    if let Some(i) = spec.iterations {
        h.bytes(b"iterations").word(i.into());
    }
    if spec.closed {
        h.bytes(b"closed");
    }
    // Written only when asked, so fixed-S sweeps keep their ids.
    if let Some(p) = precision {
        h.bytes(b"precision").word(p.half_width.to_bits()).word(p.confidence.to_bits()).word(p.min_starts);
    }
    h.word(configurations.len() as u64);
    for c in configurations {
        c.moves.hash_into(&mut h);
        h.word(c.sides.len() as u64);
        for &n in &c.sides {
            h.word(n.into());
        }
        // Written only when given, so sampled sweeps keep their ids.
        if let Some(cells) = &c.explicit_starts {
            h.bytes(b"starts").word(cells.len() as u64);
            for &cell in cells.iter() {
                h.word(cell);
            }
        }
    }
    h.finish()
}
