//! The CPU features the walk kernels may use, detected once per process.
//! A module of its own so that the kernels that need a feature and
//! [`super::select`], which chooses among them, both depend on it and not
//! on each other.

/// The CPU features the kernels use. A feature is on only where the CPU
/// running this has it ([`Cpu::detect`]); tests turn features off to run
/// the fallback kernels on any machine, never on. Setting the environment
/// variable `KSWEEP_NO_SIMD` (see [`NO_SIMD_VAR`]) turns every feature off
/// for the whole process, so a whole test suite or sweep runs the scalar
/// kernels (docs/engine.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cpu {
    /// x86-64 SSE4.1 with SSSE3 (`phminposuw`, `pshufb`).
    sse41: bool,
}

/// The environment variable that, set to any non-empty value, makes
/// [`Cpu::detect`] report no SIMD feature: the walks take the scalar
/// kernels. Read once per process.
pub(crate) const NO_SIMD_VAR: &str = "KSWEEP_NO_SIMD";

impl Cpu {
    /// The features of the CPU running this, none where [`NO_SIMD_VAR`]
    /// is set. Detected (and the variable read) once per process.
    pub(crate) fn detect() -> Cpu {
        static DETECTED: std::sync::OnceLock<Cpu> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(|| Cpu::detect_with(std::env::var_os(NO_SIMD_VAR).as_deref()))
    }

    /// The features of the CPU running this, none where `no_simd` (the
    /// value of [`NO_SIMD_VAR`]) is set and not empty.
    fn detect_with(no_simd: Option<&std::ffi::OsStr>) -> Cpu {
        let simd_off = no_simd.is_some_and(|v| !v.is_empty());
        #[cfg(target_arch = "x86_64")]
        let sse41 = std::arch::is_x86_feature_detected!("sse4.1") && std::arch::is_x86_feature_detected!("ssse3");
        #[cfg(not(target_arch = "x86_64"))]
        let sse41 = false;
        Cpu { sse41: sse41 && !simd_off }
    }

    /// The names of the features on, as a result's provenance records
    /// them.
    pub(crate) fn names(self) -> Vec<&'static str> {
        if self.sse41 {
            vec!["sse4.1", "ssse3"]
        } else {
            Vec::new()
        }
    }

    /// This CPU with SSE4.1 and SSSE3 turned off: walks take the scalar
    /// kernels.
    #[cfg(test)]
    pub(crate) fn without_sse41(self) -> Cpu {
        Cpu { sse41: false }
    }

    /// Every feature set a test can run on this machine: the detected one
    /// and each with a feature turned off.
    #[cfg(test)]
    pub(crate) fn feature_sets() -> Vec<Cpu> {
        let cpu = Cpu::detect();
        let mut out = vec![cpu, cpu.without_sse41()];
        out.dedup();
        out
    }

    /// Whether SSE4.1 and SSSE3 may be used: true only where the CPU has
    /// them.
    pub(crate) fn has_sse41(self) -> bool {
        self.sse41
    }
}

#[cfg(test)]
mod tests {
    use super::{Cpu, NO_SIMD_VAR};

    #[test]
    fn the_no_simd_variable_turns_every_feature_off() {
        use std::ffi::OsStr;
        let on = Cpu::detect_with(None);
        assert_eq!(Cpu::detect_with(Some(OsStr::new(""))), on, "an empty value changes nothing");
        assert_eq!(Cpu::detect_with(Some(OsStr::new("1"))), on.without_sse41());
        assert_eq!(Cpu::detect_with(Some(OsStr::new("no"))), on.without_sse41(), "any value");
        // What this process runs on: `KSWEEP_NO_SIMD=1 cargo test` runs the
        // scalar kernels everywhere (the runner's tests check it chooses
        // them).
        let set = std::env::var_os(NO_SIMD_VAR).is_some_and(|v| !v.is_empty());
        assert_eq!(Cpu::detect(), if set { on.without_sse41() } else { on });
    }
}
