//! The CPU features the walk kernels may use, detected once per process,
//! and the types that prove them ([`Sse41`], [`Avx2`], [`Avx512`],
//! [`Avx512Vbmi`]). A module of its own so that the kernels that need
//! a feature and [`super::select`], which chooses among them, both depend on
//! it and not on each other.

/// How far up the x86-64 vector extensions the kernels may go: each level
/// includes the ones below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Level {
    /// No vector kernel: the scalar ones everywhere.
    Scalar,
    /// SSE4.1 with SSSE3 (`phminposuw`, `pshufb`).
    Sse41,
    /// AVX2 (32-bit gathers, 256-bit lanes).
    Avx2,
    /// AVX-512 F (16-lane gathers).
    Avx512,
}

impl Level {
    /// Every level, lowest first.
    pub(crate) const ALL: [Level; 4] = [Level::Scalar, Level::Sse41, Level::Avx2, Level::Avx512];

    /// The name [`SIMD_VAR`] takes for this level.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Sse41 => "sse4.1",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    /// The level [`SIMD_VAR`] names, if any.
    fn named(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }
}

/// The CPU features the kernels use. A feature is on only where the CPU
/// running this has it ([`Cpu::detect`]); tests cap the level to run the
/// fallback kernels on any machine, never raise it. The environment
/// variables [`SIMD_VAR`] (a cap: `scalar`, `sse4.1`, `avx2`, `avx512`)
/// and [`NO_SIMD_VAR`] (any value: `scalar`) cap it for the whole process,
/// so a whole test suite or sweep runs one path (docs/engine.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cpu {
    level: Level,
}

/// The environment variable that, set to any non-empty value, makes
/// [`Cpu::detect`] report no SIMD feature: the walks take the scalar
/// kernels. Read once per process.
pub(crate) const NO_SIMD_VAR: &str = "KSWEEP_NO_SIMD";

/// The environment variable that caps the level [`Cpu::detect`] reports
/// at the one it names ([`Level::name`]); a name it does not know is
/// refused when detected. Read once per process.
pub(crate) const SIMD_VAR: &str = "KSWEEP_SIMD";

impl Cpu {
    /// The features of the CPU running this, capped by [`SIMD_VAR`] and
    /// [`NO_SIMD_VAR`]. Detected (and the variables read) once per process;
    /// panics if [`SIMD_VAR`] names no level, so a mistyped cap never
    /// silently runs another path.
    pub(crate) fn detect() -> Cpu {
        static DETECTED: std::sync::OnceLock<Cpu> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(|| Cpu::from_env().unwrap_or_else(|e| panic!("{e}")))
    }

    /// The features the environment's variables leave on, or the error
    /// that names a level [`SIMD_VAR`] does not know (binaries check this
    /// first, through [`crate::check_kernel_env`]).
    pub(crate) fn from_env() -> crate::Result<Cpu> {
        let cap = std::env::var(SIMD_VAR).ok();
        Cpu::detect_with(std::env::var_os(NO_SIMD_VAR).as_deref(), cap.as_deref())
    }

    /// The features of the CPU running this, none where `no_simd` (the
    /// value of [`NO_SIMD_VAR`]) is set and not empty, at most `cap` (the
    /// value of [`SIMD_VAR`]) where it is set and not empty.
    fn detect_with(no_simd: Option<&std::ffi::OsStr>, cap: Option<&str>) -> crate::Result<Cpu> {
        let cap = match cap.filter(|c| !c.trim().is_empty()) {
            None => Level::Avx512,
            Some(name) => Level::named(name).ok_or_else(|| {
                let names: Vec<&str> = Level::ALL.iter().map(|l| l.name()).collect();
                crate::Error::SimdLevel { value: name.to_string(), levels: names.join(", ") }
            })?,
        };
        let cap = if no_simd.is_some_and(|v| !v.is_empty()) { Level::Scalar } else { cap };
        Ok(Cpu { level: Cpu::machine().min(cap) })
    }

    /// The highest level this machine has.
    fn machine() -> Level {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f") && has!("avx2") && has!("sse4.1") && has!("ssse3") {
                Level::Avx512
            } else if has!("avx2") && has!("sse4.1") && has!("ssse3") {
                Level::Avx2
            } else if has!("sse4.1") && has!("ssse3") {
                Level::Sse41
            } else {
                Level::Scalar
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Level::Scalar
    }

    /// The names of the features on, as a result's provenance records
    /// them.
    pub(crate) fn names(self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.level >= Level::Sse41 {
            out.extend(["sse4.1", "ssse3"]);
        }
        if self.level >= Level::Avx2 {
            out.push("avx2");
        }
        if self.level >= Level::Avx512 {
            out.push("avx512f");
        }
        out
    }

    /// The level the kernels may use.
    pub(crate) fn level(self) -> Level {
        self.level
    }

    /// This CPU capped at `level`.
    #[cfg(test)]
    pub(crate) fn capped(self, level: Level) -> Cpu {
        Cpu { level: self.level.min(level) }
    }

    /// This CPU with SSE4.1 and SSSE3 (and so every wider level) turned
    /// off: walks take the scalar kernels.
    #[cfg(test)]
    pub(crate) fn without_sse41(self) -> Cpu {
        self.capped(Level::Scalar)
    }

    /// Every feature set a test can run on this machine: the detected one
    /// and each lower level.
    #[cfg(test)]
    pub(crate) fn feature_sets() -> Vec<Cpu> {
        let cpu = Cpu::detect();
        let mut out: Vec<Cpu> = Level::ALL.iter().rev().map(|&l| cpu.capped(l)).collect();
        out.dedup();
        out
    }

    /// Whether SSE4.1 and SSSE3 may be used: true only where the CPU has
    /// them.
    pub(crate) fn has_sse41(self) -> bool {
        self.level >= Level::Sse41
    }
}

/// Proof that the CPU running this has SSE4.1 and SSSE3: made only from a
/// [`Cpu`] that has them, and held by every kernel that uses them, so it
/// runs only where its instructions exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sse41(());

impl Sse41 {
    /// The proof, where `cpu` has the features.
    pub(crate) fn new(cpu: Cpu) -> Option<Sse41> {
        cpu.has_sse41().then_some(Sse41(()))
    }
}

/// Proof that the CPU running this has AVX2: made only from a [`Cpu`] at
/// [`Level::Avx2`] or above, and held by the kernels that use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// The proof, where `cpu` has the feature.
    pub(crate) fn new(cpu: Cpu) -> Option<Avx2> {
        (cpu.level >= Level::Avx2).then_some(Avx2(()))
    }
}

/// Proof that the CPU running this has AVX-512 F (and AVX2): made only
/// from a [`Cpu`] at [`Level::Avx512`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// The proof, where `cpu` has the feature.
    pub(crate) fn new(cpu: Cpu) -> Option<Avx512> {
        (cpu.level >= Level::Avx512).then_some(Avx512(()))
    }
}

/// Proof that the CPU running this has AVX-512 F, BW and VBMI (byte
/// permutes across two registers), with AVX2 and SSE4.1: made only from a
/// [`Cpu`] at [`Level::Avx512`] whose machine has BW and VBMI (Zen 4, Ice
/// Lake and later; not Skylake-X, which has F alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Avx512Vbmi(());

impl Avx512Vbmi {
    /// The proof, where `cpu` has the features.
    pub(crate) fn new(cpu: Cpu) -> Option<Avx512Vbmi> {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            (cpu.level >= Level::Avx512 && has!("avx512bw") && has!("avx512vbmi")).then_some(Avx512Vbmi(()))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = cpu;
            None
        }
    }
    /// The SSE4.1 these features include.
    pub(crate) fn sse41(self) -> Sse41 {
        Sse41(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Cpu, Level, NO_SIMD_VAR, SIMD_VAR};

    #[test]
    fn the_variables_cap_the_level_and_never_raise_it() {
        use std::ffi::OsStr;
        let on = Cpu::detect_with(None, None).unwrap();
        assert_eq!(on.level(), Cpu::machine());
        assert_eq!(Cpu::detect_with(Some(OsStr::new("")), None).unwrap(), on, "an empty value changes nothing");
        assert_eq!(Cpu::detect_with(Some(OsStr::new("1")), None).unwrap(), on.without_sse41());
        assert_eq!(Cpu::detect_with(Some(OsStr::new("no")), Some("avx512")).unwrap(), on.without_sse41(), "any value");
        for level in Level::ALL {
            let capped = Cpu::detect_with(None, Some(level.name())).unwrap();
            assert_eq!(capped.level(), level.min(Cpu::machine()), "{level:?}");
            assert_eq!(Cpu::detect_with(None, Some(&level.name().to_uppercase())).unwrap(), capped);
        }
        assert_eq!(Cpu::detect_with(None, Some(" ")).unwrap(), on);
        let refused = Cpu::detect_with(None, Some("avx3")).unwrap_err();
        assert_eq!(refused.to_string(), "KSWEEP_SIMD=\"avx3\": not a level (one of scalar, sse4.1, avx2, avx512)");
        // What this process runs on: `KSWEEP_SIMD=sse4.1 cargo test` runs
        // the SSE4.1 kernels where the wider ones would run (the runner's
        // tests check it chooses them).
        let no_simd = std::env::var_os(NO_SIMD_VAR);
        let cap = std::env::var(SIMD_VAR).ok();
        assert_eq!(Cpu::detect(), Cpu::detect_with(no_simd.as_deref(), cap.as_deref()).unwrap());
    }
}
