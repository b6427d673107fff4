#!/usr/bin/env bash
# End-to-end test of the docker-compose deployment, with faults:
# build the image (no registry needed), start a coordinator and 3 workers,
# submit specs/docker-e2e.toml from the host, and while it runs SIGKILL a
# worker, SIGKILL and restart the coordinator, and cut a worker off the
# network for longer than a lease. The sweep must complete with the table of
# `ksweep run` on the same spec (timings aside), and `docker-compose down -v`
# must leave nothing behind. Skipped, with a message, where no Docker engine
# answers. Bounded in time; cleans up on any exit.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=docker-e2e
. tests/e2e-lib.sh

require_docker
if ! command -v docker-compose >/dev/null 2>&1; then
    say "SKIPPED: docker-compose is not installed"
    exit 0
fi

spec=specs/docker-e2e.toml
project="ksweep-e2e-$$"
port=$(free_port)
http_port=$(free_port)
export KSWEEP_PORT=$port KSWEEP_HTTP_PORT=$http_port KSWEEP_IMAGE="knight-sweep:e2e-$$" KSWEEP_TOKEN="e2e-secret-$$"
url="http://127.0.0.1:$port"
work=$(mktemp -d)
compose() { docker-compose -p "$project" -f docker-compose.yml "$@"; }
cleanup() {
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        say "FAILED (exit $rc); coordinator log tail:"
        compose logs --no-color --tail 30 coordinator 2>&1 | sed 's/^/    /' || true
    fi
    compose down -v --remove-orphans >/dev/null 2>&1 || true
    docker image rm -f "$KSWEEP_IMAGE" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

say "building the image"
docker/build-image.sh >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
size=$(docker image inspect -f '{{.Size}}' "$KSWEEP_IMAGE")
say "image $KSWEEP_IMAGE: $(( size / 1024 )) KiB"
ksweep_binary
start_deadline 1500

say "reference: ksweep run on the host"
reference_table "$spec" "$work"

say "cluster: coordinator + 3 workers"
compose up -d --scale worker=3 >"$work/up.log" 2>&1 || { cat "$work/up.log"; exit 1; }
id=$("$k" submit "$spec" --coordinator "$url" | tail -n 1)
say "submitted sweep $id"

# The dashboard is published on 127.0.0.1 and asks for the token.
dashboard() { # path [token] -> HTTP status
    python3 - "http://127.0.0.1:$http_port$1" "${2:-}" <<'PY'
import sys, urllib.request, urllib.error
request = urllib.request.Request(sys.argv[1])
if sys.argv[2]:
    request.add_header("Authorization", "Bearer " + sys.argv[2])
try:
    print(urllib.request.urlopen(request, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
}
[ "$(dashboard /api/sweeps)" = 401 ] || { say "the dashboard answered without the token"; exit 1; }
[ "$(dashboard "/api/sweeps/$id" "$KSWEEP_TOKEN")" = 200 ] || { say "the dashboard did not show sweep $id"; exit 1; }
say "dashboard on 127.0.0.1:$http_port: 401 without the token, the sweep with it"

done_tasks() { "$k" status "$id" --coordinator "$url" 2>/dev/null | awk '/^tasks/ { print $2 " " $4 }'; }
state() { "$k" status "$id" --coordinator "$url" 2>/dev/null | awk '/^state/ { print $2 }'; }
wait_progress() { # percent
    while true; do
        check_deadline
        read -r d t < <(done_tasks || echo "0 1")
        if [ "${t:-0}" -gt 0 ] && [ $(( d * 100 / t )) -ge "$1" ]; then say "progress $d/$t"; return; fi
        [ "$(state)" = done ] && { say "done before the $1% fault"; return; }
        sleep 0.5
    done
}
container() { compose ps -q "$1" | sed -n "${2:-1}p"; }

wait_progress 10
victim=$(container worker 1)
say "fault 1: SIGKILL worker ${victim:0:12}"
docker kill -s KILL "$victim" >/dev/null

wait_progress 30
say "fault 2: SIGKILL the coordinator, then start it again on its volume"
docker kill -s KILL "$(container coordinator)" >/dev/null
sleep 2
docker start "$(container coordinator)" >/dev/null 2>&1 || true
until "$k" health --coordinator "$url" 2>/dev/null; do check_deadline; sleep 0.5; done
say "coordinator back"

wait_progress 50
cut=$(container worker 2)
network=$(docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' "$cut" | awk '{ print $1 }')
say "fault 3: disconnect worker ${cut:0:12} from $network for 15 s (lease: 10 s)"
docker network disconnect "$network" "$cut"
sleep 15
docker network connect "$network" "$cut"
say "reconnected"

while [ "$(state)" != done ]; do
    check_deadline
    s=$(state)
    case "$s" in failed|cancelled) say "sweep ended $s"; exit 1 ;; esac
    sleep 1
done
read -r d t < <(done_tasks)
say "sweep done: $d/$t tasks"
[ "$d" = "$t" ] || { say "tasks_done $d != tasks_total $t"; exit 1; }
rows=$("$k" export "$id" --coordinator "$url" --format csv | tail -n +2 | wc -l)
[ "$rows" = "$t" ] || { say "export has $rows rows, expected $t"; exit 1; }

"$k" table "$id" --coordinator "$url" --format json | grep -v micros >"$work/cluster.json"
same_as_reference "$work" "$work/cluster.json"

compose down -v --remove-orphans >/dev/null 2>&1
left=$(docker ps -aq --filter "label=com.docker.compose.project=$project"; docker volume ls -q --filter "label=com.docker.compose.project=$project"; docker network ls -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || { say "left behind after down -v: $left"; exit 1; }
say "down -v left nothing behind"
say "PASSED in $(( $(date +%s) - started )) s; image $(( size / 1024 )) KiB"
echo "1 passed, 0 failed"
