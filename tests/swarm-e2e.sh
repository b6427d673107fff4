#!/usr/bin/env bash
# End-to-end test of deploy/stack.yml on a one-node Docker Swarm, with faults:
# build the image (no registry needed), init a swarm on 127.0.0.1 (or reuse
# the one-node swarm this machine manages), create the token as a Docker
# secret, `docker stack deploy` a coordinator and 4 workers, submit
# specs/docker-e2e.toml from the host, and while it runs SIGKILL a worker's
# container, restart the coordinator service (`docker service update
# --force`) and SIGKILL its container. The sweep must complete with the table
# of `ksweep run` on the same spec (timings aside), and `docker stack rm`
# plus the removal of the secret, volume, image and swarm must leave nothing
# behind. Skipped, with a message, where no Docker engine answers or swarm
# mode cannot be had without touching a swarm this script did not create.
# Bounded in time; cleans up on any exit; prints each phase's duration.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=swarm-e2e
. tests/e2e-lib.sh

require_docker

# The host's clients read the token from the file given to them, nothing else.
unset KSWEEP_TOKEN KSWEEP_TOKEN_FILE KSWEEP_COORDINATOR
spec=specs/docker-e2e.toml
stack="ksweep-swarm-$$"
port=$(free_port)
export KSWEEP_PORT=$port KSWEEP_IMAGE="knight-sweep:swarm-e2e-$$" KSWEEP_TOKEN_SECRET="${stack}_token"
url="http://127.0.0.1:$port"
work=$(mktemp -d)
token_file="$work/token"
own_swarm=0         # 1: this script initialised the swarm, and leaves it
own_gwbridge=0      # 1: docker_gwbridge came with that swarm
swarm_state() { docker info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null; }
# Everything of the stack's, by label and by name.
labelled() { echo "label=com.docker.stack.namespace=$stack"; }
left_containers() { { docker ps -aq --filter "$(labelled)"; docker ps -aq --filter "name=${stack}_"; } | sort -u; }
left_networks() { { docker network ls -q --filter "$(labelled)"; docker network ls -q --filter "name=${stack}_"; } | sort -u; }
left_volumes() { { docker volume ls -q --filter "$(labelled)"; docker volume ls -q --filter "name=${stack}_"; } | sort -u; }
left_services() { docker service ls -q --filter "$(labelled)" 2>/dev/null; docker service ls -q --filter "name=${stack}_" 2>/dev/null; }
left_secrets() { docker secret ls -q --filter "name=$KSWEEP_TOKEN_SECRET" 2>/dev/null; }

# Removes the stack and all it used; waits (up to $1 s) for its containers
# and networks to go before the volume goes. Never fails: the caller checks.
remove_stack() {
    local until=$(( $(date +%s) + $1 ))
    docker stack rm "$stack" >/dev/null 2>&1 || true
    while [ -n "$(left_services)$(left_containers)$(left_networks)" ] && [ "$(date +%s)" -lt "$until" ]; do
        sleep 0.5
    done
    docker secret rm "$KSWEEP_TOKEN_SECRET" >/dev/null 2>&1 || true
    # The volume goes once no container holds it (the last ones may still be
    # in removal just after `docker ps` stopped listing them).
    while [ -n "$(left_volumes)" ]; do
        left_volumes | xargs -r docker volume rm >/dev/null 2>&1 || true
        [ "$(date +%s)" -lt "$until" ] || break
        [ -n "$(left_volumes)" ] && sleep 0.5
    done
    docker image rm -f "$KSWEEP_IMAGE" >/dev/null 2>&1 || true
}
# Leaves the swarm if this script created it (and only then).
leave_swarm() {
    if [ "$own_swarm" = 1 ]; then
        docker swarm leave --force >/dev/null 2>&1 || true
        own_swarm=0
        # Swarm init created it; swarm leave does not remove it.
        if [ "$own_gwbridge" = 1 ]; then docker network rm docker_gwbridge >/dev/null 2>&1 || true; fi
    fi
}

cleanup() {
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        say "FAILED (exit $rc); coordinator and worker log tails:"
        docker service logs --no-trunc --tail 30 "${stack}_coordinator" 2>&1 | sed 's/^/    /' || true
        docker service logs --no-trunc --tail 10 "${stack}_worker" 2>&1 | sed 's/^/    /' || true
        docker service ps --no-trunc "${stack}_coordinator" "${stack}_worker" 2>&1 | sed 's/^/    /' || true
    fi
    remove_stack 60
    leave_swarm
    rm -rf "$work"
}
trap cleanup EXIT

# Swarm mode: ours, or a one-node swarm this machine already manages (then
# reused, and never left). Anything else is not this test's to touch.
case "$(swarm_state)" in
inactive)
    docker network inspect docker_gwbridge >/dev/null 2>&1 || own_gwbridge=1
    # Management and data traffic on loopback only: nothing listens outside.
    if ! docker swarm init --advertise-addr 127.0.0.1 --listen-addr 127.0.0.1:2377 >"$work/init.log" 2>&1; then
        say "SKIPPED: swarm mode cannot be initialised here: $(tr '\n' ' ' <"$work/init.log")"
        [ "$own_gwbridge" = 1 ] && docker network rm docker_gwbridge >/dev/null 2>&1 || true
        exit 0
    fi
    own_swarm=1
    say "swarm initialised on 127.0.0.1 (left at the end)"
    ;;
active)
    if [ "$(docker info --format '{{.Swarm.ControlAvailable}}')" != true ]; then
        say "SKIPPED: this node is a swarm worker; the test deploys from a manager and does not leave a swarm it did not create"
        exit 0
    fi
    nodes=$(docker node ls -q | wc -l)
    if [ "$nodes" -ne 1 ]; then
        say "SKIPPED: this node manages a swarm of $nodes nodes; the image is built here only, so tasks on other nodes could not start"
        exit 0
    fi
    say "reusing this machine's one-node swarm (not left at the end)"
    ;;
*)
    say "SKIPPED: swarm state '$(swarm_state)' (neither inactive nor active); not touching it"
    exit 0
    ;;
esac

t0=$(date +%s)
say "building the image"
docker/build-image.sh >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
size=$(docker image inspect -f '{{.Size}}' "$KSWEEP_IMAGE")
say "image $KSWEEP_IMAGE: $(( size / 1024 )) KiB"
ksweep_binary
t_build=$(( $(date +%s) - t0 ))
start_deadline 1500

t0=$(date +%s)
say "reference: ksweep run on the host"
reference_table "$spec" "$work"
t_reference=$(( $(date +%s) - t0 ))

t0=$(date +%s)
python3 -c 'import secrets; print(secrets.token_hex(16))' >"$token_file"
token=$(cat "$token_file")
docker secret create "$KSWEEP_TOKEN_SECRET" "$token_file" >/dev/null
say "cluster: docker stack deploy $stack (coordinator on 127.0.0.1:$port, 4 workers)"
docker stack deploy --resolve-image never -c deploy/stack.yml "$stack" >"$work/deploy.log" 2>&1 \
    || { cat "$work/deploy.log"; exit 1; }
health() { "$k" health --coordinator "$url" --token-file "$token_file" >/dev/null 2>&1; }
# A task Swarm cannot place (reservations above the node) fails now, not
# at the deadline.
unplaceable() {
    docker service ps --no-trunc --filter desired-state=running --format '{{.Name}}: {{.Error}}' \
        "${stack}_coordinator" "${stack}_worker" 2>/dev/null | grep 'no suitable node'
}
placed() {
    local why
    if why=$(unplaceable); then
        say "Swarm cannot place every task: $why"
        exit 1
    fi
}
until health; do check_deadline; placed; sleep 0.5; done
replicas() { docker service ls --filter "name=${stack}_$1" --format '{{.Replicas}}' | head -n 1; }
until [ "$(replicas worker)" = 4/4 ]; do check_deadline; placed; sleep 0.5; done
t_start=$(( $(date +%s) - t0 ))
say "coordinator healthy, workers $(replicas worker), in ${t_start} s"

# The token is a secret: on no service's or container's definition, and the
# published port refuses calls without it.
if docker service inspect "${stack}_coordinator" "${stack}_worker" | grep -q "$token" \
    || docker inspect $(left_containers) | grep -q "$token"; then
    say "the token shows in docker inspect"
    exit 1
fi
if "$k" health --coordinator "$url" >/dev/null 2>&1; then
    say "the coordinator answered a call without the token"
    exit 1
fi
say "token: a secret file in the containers, not in docker inspect; calls without it refused"

# The overlay is encrypted and every service has CPU and memory limits,
# as the engine holds them (not only as the file says).
if [ "$(docker network inspect "${stack}_sweep" --format '{{index .Options "encrypted"}}')" != true ]; then
    say "the overlay network ${stack}_sweep is not encrypted"
    exit 1
fi
for service in coordinator worker; do
    limits=$(docker service inspect "${stack}_$service" \
        --format '{{.Spec.TaskTemplate.Resources.Limits.NanoCPUs}} {{.Spec.TaskTemplate.Resources.Limits.MemoryBytes}}')
    read -r cpus memory <<<"$limits"
    if [ "${cpus:-0}" -le 0 ] || [ "${memory:-0}" -le 0 ]; then
        say "$service: no CPU or memory limit ($limits)"
        exit 1
    fi
done
say "overlay encrypted; coordinator and workers with CPU and memory limits"

t0=$(date +%s)
id=$("$k" submit "$spec" --coordinator "$url" --token-file "$token_file" | tail -n 1)
say "submitted sweep $id"

status() { "$k" status "$id" --coordinator "$url" --token-file "$token_file" 2>/dev/null; }
done_tasks() { status | awk '/^tasks/ { print $2 " " $4 }'; }
state() { status | awk '/^state/ { print $2 }'; }
wait_progress() { # percent
    while true; do
        check_deadline
        read -r d t < <(done_tasks || echo "0 1")
        if [ "${t:-0}" -gt 0 ] && [ $(( d * 100 / t )) -ge "$1" ]; then say "progress $d/$t"; return; fi
        [ "$(state)" = done ] && { say "done before the $1% fault"; return; }
        sleep 0.5
    done
}
# The running containers of a service (swarm labels each with its service).
running() { docker ps -q --filter "label=com.docker.swarm.service.name=${stack}_$1"; }
t_faults=0
fault_time() { t_faults=$(( t_faults + $(date +%s) - $1 )); }
# Waits until a coordinator task other than the old one runs and answers.
wait_new_coordinator() { # old container id
    until [ -n "$(running coordinator)" ] && [ "$(running coordinator)" != "$1" ] && health; do
        check_deadline
        sleep 0.5
    done
}

wait_progress 10
f0=$(date +%s)
victim=$(running worker | head -n 1)
say "fault 1: SIGKILL worker container ${victim:0:12}"
docker kill -s KILL "$victim" >/dev/null
# Swarm replaces the task (restart_policy: any): 4 running again, without it.
until [ "$(running worker | grep -cv "^$victim")" -ge 4 ] && [ "$(replicas worker)" = 4/4 ]; do
    check_deadline
    sleep 0.5
done
fault_time "$f0"
say "swarm replaced the worker in $(( $(date +%s) - f0 )) s"

wait_progress 50
f0=$(date +%s)
old=$(running coordinator)
say "fault 2: docker service update --force ${stack}_coordinator (SIGTERM, a new task on the same volume)"
docker service update --force --detach "${stack}_coordinator" >"$work/update.log" 2>&1 \
    || { cat "$work/update.log"; exit 1; }
wait_new_coordinator "$old"
fault_time "$f0"
say "coordinator back (new task) in $(( $(date +%s) - f0 )) s"

wait_progress 75
f0=$(date +%s)
old=$(running coordinator)
say "fault 3: SIGKILL the coordinator container ${old:0:12}"
docker kill -s KILL "$old" >/dev/null
wait_new_coordinator "$old"
fault_time "$f0"
say "swarm restarted the coordinator in $(( $(date +%s) - f0 )) s"

while [ "$(state)" != done ]; do
    check_deadline
    s=$(state)
    case "$s" in failed|cancelled) say "sweep ended $s"; exit 1 ;; esac
    sleep 1
done
t_sweep=$(( $(date +%s) - t0 ))
read -r d t < <(done_tasks)
say "sweep done: $d/$t tasks in ${t_sweep} s (faults included)"
[ "$d" = "$t" ] || { say "tasks_done $d != tasks_total $t"; exit 1; }
rows=$("$k" export "$id" --coordinator "$url" --token-file "$token_file" --format csv | tail -n +2 | wc -l)
[ "$rows" = "$t" ] || { say "export has $rows rows, expected $t"; exit 1; }

"$k" table "$id" --coordinator "$url" --token-file "$token_file" --format json | grep -v micros >"$work/cluster.json"
same_as_reference "$work" "$work/cluster.json"

t0=$(date +%s)
say "teardown: docker stack rm, the secret, the volume, the image$([ "$own_swarm" = 1 ] && echo ", the swarm")"
remove_stack 120
# Checked before the swarm is left: services and secrets live in it.
left=$(left_services; left_secrets; left_containers; left_networks; left_volumes)
[ -z "$left" ] || { say "left behind by docker stack rm: $(echo $left)"; exit 1; }
if docker image inspect "$KSWEEP_IMAGE" >/dev/null 2>&1; then say "image $KSWEEP_IMAGE left behind"; exit 1; fi
left_swarm=$own_swarm
leave_swarm
if [ "$left_swarm" = 1 ]; then
    [ "$(swarm_state)" = inactive ] || { say "the swarm was not left: $(swarm_state)"; exit 1; }
    if [ "$own_gwbridge" = 1 ] && docker network inspect docker_gwbridge >/dev/null 2>&1; then
        say "docker_gwbridge left behind"
        exit 1
    fi
    left=$(left_containers; left_networks; left_volumes)
    [ -z "$left" ] || { say "left behind after swarm leave: $(echo $left)"; exit 1; }
fi
t_teardown=$(( $(date +%s) - t0 ))
say "teardown left nothing behind (no service, container, network, volume, secret, image$([ "$left_swarm" = 1 ] && echo "; swarm left"))"

say "timings: builds ${t_build} s, reference ${t_reference} s, cluster start ${t_start} s," \
    "sweep ${t_sweep} s (of which faults ${t_faults} s), teardown ${t_teardown} s"
say "PASSED in $(( $(date +%s) - started )) s; image $(( size / 1024 )) KiB"
echo "1 passed, 0 failed"
