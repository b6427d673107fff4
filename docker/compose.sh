# Sourced, not run: defines `compose`, the Compose command this machine has.
# Docker Compose v2 (`docker compose`, a docker plugin) is preferred; the v1
# standalone `docker-compose` is the fallback. Extra arguments of
# `compose_cmd` (e.g. `-p NAME -f FILE`) go before the subcommand.
#
#   . docker/compose.sh
#   have_compose || { echo "no Docker Compose"; exit 1; }
#   compose -f docker-compose.yml up -d

# Prints the Compose command (`docker compose` or `docker-compose`); fails
# when there is none.
compose_cmd() {
    if command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
        echo "docker compose"
    elif command -v docker-compose >/dev/null 2>&1; then
        echo "docker-compose"
    else
        return 1
    fi
}

# True when some Docker Compose is installed.
have_compose() { compose_cmd >/dev/null; }

# Runs Docker Compose with the given arguments.
compose() {
    local cmd
    cmd=$(compose_cmd) || { echo "Docker Compose is not installed (docker compose or docker-compose)" >&2; return 127; }
    # Word splitting of $cmd is the point: "docker compose" is two words.
    # shellcheck disable=SC2086
    $cmd "$@"
}
