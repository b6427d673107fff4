#!/usr/bin/env bash
# Builds a statically linked ksweep (glibc, crt-static: no musl target needed)
# and the image knight-sweep:local from it. Needs only cargo and docker.
#
# Only the binary's own crate is compiled with crt-static (`cargo rustc`
# hands the flag to it alone): static linking is decided at the final link
# (std's and the libc crate's link attributes), so the libraries are the ones
# `cargo build --release -p ksweep` compiles, and after the README's main
# command the static binary costs a link, not a second build of every
# dependency (a `--target` build with the flag in RUSTFLAGS, which cannot
# reach proc-macros otherwise, took 328 s on a Zen 4 host).
#
# The static binary is left at target/release/ksweep-static (it runs on any
# x86-64 Linux); target/release/ksweep is the one that was there before.
set -euo pipefail
cd "$(dirname "$0")/.."
release=${CARGO_TARGET_DIR:-target}/release
# cargo links target/release/ksweep to the binary it built last: keep the one
# there (renamed, never written through, as the link shares cargo's copy).
saved=$release/.ksweep-before-image
rm -f "$saved"
if [ -e "$release/ksweep" ]; then cp -p "$release/ksweep" "$saved"; fi
cargo rustc --release --locked -p ksweep --bin ksweep -- -C target-feature=+crt-static
rm -f "$release/ksweep-static"
cp "$release/ksweep" "$release/ksweep-static"
if [ -e "$saved" ]; then mv -f "$saved" "$release/ksweep"; fi
if readelf -d "$release/ksweep-static" | grep -q NEEDED; then
    echo "$release/ksweep-static needs shared libraries: not statically linked" >&2
    exit 1
fi
ctx=docker/context
rm -rf "$ctx"
mkdir -p "$ctx/data"
cp "$release/ksweep-static" "$ctx/ksweep"
strip "$ctx/ksweep" 2>/dev/null || true
cp docker/Dockerfile "$ctx/Dockerfile"
docker build --pull=false -t "${KSWEEP_IMAGE:-knight-sweep:local}" "$ctx"
docker image ls "${KSWEEP_IMAGE:-knight-sweep:local}"
