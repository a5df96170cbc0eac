#!/usr/bin/env bash
# `make test`: builds, starts a private PostgreSQL, runs every test (unit, integration, end-to-end with services as
# separate processes), and stops everything it started, pass or fail. Extra arguments go to `swift test`.
source "$(dirname "$0")/lib.sh"

TEST_STATE="${SURGE_TEST_STATE:-$STATE/test}"
PG_PORT="${SURGE_TEST_PG_PORT:-55433}"

ensure_dependencies
# The dashboard's browser check (AnalyticsSystemTests): Debian's chromium and chromium-driver, selenium in a venv.
ensure_browser
# The observability test (ObservabilitySystemTests): Debian's prometheus.
ensure_prometheus
log "Building (with tests)"
(cd "$ROOT" && swift build --build-tests)

rm -rf "$TEST_STATE"
mkdir -p "$TEST_STATE/logs"
random_secret >"$TEST_STATE/admin-password"
export SURGE_TEST_PIDS="$TEST_STATE/pids"
touch "$SURGE_TEST_PIDS"

cleanup() {
  while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done <"$SURGE_TEST_PIDS"
  pg_stop "$TEST_STATE/pgdata"
}
trap cleanup EXIT

log "Starting a private PostgreSQL on 127.0.0.1:$PG_PORT"
# Every system test runs its own stack, up to ten connections per service, many stacks at once.
PG_MAX_CONNECTIONS=1000 PG_FSYNC=off pg_start "$TEST_STATE/pgdata" "$PG_PORT" "$TEST_STATE/admin-password"

export SURGE_TEST_DATABASE_URL="postgres://surge_admin:$(cat "$TEST_STATE/admin-password")@127.0.0.1:$PG_PORT/postgres"
export SURGE_TEST_LOGS="$TEST_STATE/logs"
export SURGE_TEST_BINARIES="$BIN"
export SURGE_TEST_BROWSER_PYTHON="$BROWSER_VENV/bin/python"
# What tests leave for people to look at (the dashboard's screenshot).
export SURGE_TEST_ARTIFACTS="$TEST_STATE/artifacts"
mkdir -p "$SURGE_TEST_ARTIFACTS"

# At most this many tests at once (Swift Testing's own limit is far wider): each system test runs a whole stack of
# processes, and a dozen stacks at once on two cores starve one another past any deadline.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SURGE_TEST_PARALLELISM:-6}"

# The chaos suite restarts this PostgreSQL, so a full run gives it the server alone, after everything else. The server
# must not inherit the test process's descriptors (Foundation's Process watches one per child to see it exit), hence
# Python's close_fds.
export SURGE_TEST_PG_RESTART="python3 -c 'import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:], close_fds=True).returncode)' \
  bash -c \"source '$ROOT/scripts/lib.sh' && pg_restart '$TEST_STATE/pgdata'\""

log "Running the tests (service logs in $SURGE_TEST_LOGS)"
cd "$ROOT"
if [ $# -eq 0 ]; then
  swift test --skip-build --skip ChaosSystemTests
  log "Chaos: faults under load (alone: it restarts PostgreSQL)"
  swift test --skip-build --filter ChaosSystemTests
else
  swift test --skip-build "$@"
fi
