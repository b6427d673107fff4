#!/usr/bin/env bash
# The engine's tests under AddressSanitizer: a memory checker over the walk
# kernels' unsafe code (tour/src/walk.rs, tour/src/walk/, tour/src/layout.rs,
# tour/src/layout/padded.rs).
# Miri cannot be installed here; a nightly toolchain's -Zsanitizer=address
# can be used where one is present (docs/engine.md, "Unsafe code and
# AddressSanitizer").
#
#   1. A canary, one file reading a byte past a Vec's end, built the same
#      way, must be reported as a heap-buffer-overflow: so a pass below
#      means ASan was watching, not that it was absent.
#   2. The tour crate's tests, --profile checked (release optimisation with
#      debug assertions), instrumented, with the kernels this CPU has (the
#      SSE4.1 windows where it has SSE4.1): all of them but the reproduction
#      of the 253,497 published flags, which takes about 7 minutes under
#      ASan and walks the same kernels on larger boards.
#   3. The tests that run the walk kernels (the unit tests, properties,
#      reference, cancel) again with KSWEEP_NO_SIMD=1: the scalar fallbacks.
#
# Seeds are fixed (proptest's, and the reference test's default), so every
# run walks the same boards. Builds into $CARGO_TARGET_DIR/asan (target/asan
# by default), apart from the stable build. Skipped, with the reason, where
# there is no nightly toolchain or it cannot build with the sanitizer; exits
# non-zero where ASan reports an error or a test fails. 2-3 minutes on 2
# cores from a cold target directory, a minute of it building.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
say() { printf '[asan %3ds] %s\n' "$(($(date +%s) - started))" "$*"; }

# Never a toolchain download from here (rustup may fetch a missing one).
export RUSTUP_AUTO_INSTALL=0
if ! nightly=$(cargo +nightly --version 2>&1); then
    say "skipped: no nightly toolchain (cargo +nightly --version: ${nightly%%$'\n'*})"
    exit 0
fi
say "$nightly"
host=$(rustc +nightly -vV | sed -n 's/^host: //p')

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/canary.rs" <<'EOF'
// Reads one byte past a Vec's end: AddressSanitizer must report it.
fn main() {
    let v: Vec<u8> = std::hint::black_box(vec![1; 64]);
    let past = std::hint::black_box(v.len());
    // SAFETY: none; out of bounds on purpose.
    let byte = unsafe { *v.as_ptr().add(past) };
    std::hint::black_box(byte);
}
EOF
if ! rustc +nightly -Zsanitizer=address --target "$host" -O -o "$work/canary" "$work/canary.rs" >"$work/build.log" 2>&1; then
    say "skipped: the nightly toolchain cannot build for $host with -Zsanitizer=address: $(grep -m1 '^error' "$work/build.log" || head -1 "$work/build.log")"
    exit 0
fi

# Leaks are reported too (ASan's default); a stack pointer used after its
# function returned is caught as well.
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1
if "$work/canary" >"$work/canary.log" 2>&1 || ! grep -q 'AddressSanitizer: heap-buffer-overflow' "$work/canary.log"; then
    cat "$work/canary.log"
    say "FAILED: AddressSanitizer did not report the canary's read past a Vec; a pass here would mean nothing"
    exit 1
fi
say "the canary's read past a Vec is reported: ASan works on $host"

if grep -qw sse4_1 /proc/cpuinfo 2>/dev/null && grep -qw ssse3 /proc/cpuinfo; then
    say "this CPU has SSE4.1 and SSSE3: the SIMD window kernels run in step 2"
else
    say "note: no SSE4.1 and SSSE3 here, so the SIMD window kernels do not run; the scalar ones do"
fi

export RUSTFLAGS=-Zsanitizer=address
# proptest's seed fixed; the reference test's own fixed default.
export PROPTEST_RNG_SEED=59
unset KSWEEP_REFERENCE_SEED
test_tour() {
    cargo +nightly test -p tour --locked --profile checked --target "$host" \
        --target-dir "${CARGO_TARGET_DIR:-target}/asan" "$@"
}

say "building the tour crate's tests with -Zsanitizer=address (profile checked, target $host)"
test_tour --tests --no-run

say "the tour crate's tests, SIMD kernels as detected (all but the published flags' reproduction)"
(unset KSWEEP_NO_SIMD && test_tour --tests -- --skip engine_reproduces_every_published_flag)

say "the walk kernels' tests with KSWEEP_NO_SIMD=1 (the scalar fallbacks)"
KSWEEP_NO_SIMD=1 test_tour --lib --test properties --test reference --test cancel

say "passed: no AddressSanitizer report"
