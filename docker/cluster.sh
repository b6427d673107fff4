#!/usr/bin/env bash
# A knight-sweep cluster under Docker Compose (`docker compose`, or the older
# `docker-compose`), driven from the host:
#
#   docker/cluster.sh up [WORKERS]   build the binary and image, start a coordinator and WORKERS workers (default 2)
#   docker/cluster.sh submit SPEC    submit SPEC from the host, follow its progress, print its table
#   docker/cluster.sh down           stop everything and delete the volume
#
# KSWEEP_TOKEN, the shared secret, is required (export KSWEEP_TOKEN=$(openssl rand -hex 16));
# it and KSWEEP_PORT (default 50051) are passed through.
set -euo pipefail
cd "$(dirname "$0")/.."
. docker/compose.sh
cluster() { compose -f docker-compose.yml "$@"; }
url="http://127.0.0.1:${KSWEEP_PORT:-50051}"

case "${1:-}" in
    up)
        docker/build-image.sh
        cluster up -d --scale worker="${2:-2}"
        echo "coordinator at $url"
        ;;
    submit)
        spec=${2:?usage: $0 submit SPEC}
        # The static binary `up` built runs on the host too: no second build.
        k=${CARGO_TARGET_DIR:-target}/release/ksweep-static
        if [ ! -x "$k" ]; then
            echo "no binary from \`$0 up\` at $k: building the host's (a few minutes the first time)" >&2
            cargo build --release -q --locked -p ksweep
            k=${CARGO_TARGET_DIR:-target}/release/ksweep
        fi
        id=$("$k" submit "$spec" --coordinator "$url" | tail -n 1)
        "$k" watch "$id" --coordinator "$url"
        "$k" table "$id" --coordinator "$url"
        ;;
    down)
        # Compose reads the whole file, token included, even to stop it.
        KSWEEP_TOKEN=${KSWEEP_TOKEN:-none-needed-to-stop} cluster down -v --remove-orphans
        ;;
    *)
        sed -n '2,10p' "$0"
        exit 2
        ;;
esac
