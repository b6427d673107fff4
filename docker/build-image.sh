#!/usr/bin/env bash
# Builds a statically linked ksweep (glibc, crt-static: no musl target needed)
# and the image knight-sweep:local from it. Needs only cargo and docker.
set -euo pipefail
cd "$(dirname "$0")/.."
target=x86_64-unknown-linux-gnu
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --locked --target "$target" -p ksweep
ctx=docker/context
rm -rf "$ctx"
mkdir -p "$ctx/data"
cp "${CARGO_TARGET_DIR:-target}/$target/release/ksweep" "$ctx/ksweep"
strip "$ctx/ksweep" 2>/dev/null || true
cp docker/Dockerfile "$ctx/Dockerfile"
docker build --pull=false -t "${KSWEEP_IMAGE:-knight-sweep:local}" "$ctx"
docker image ls "${KSWEEP_IMAGE:-knight-sweep:local}"
