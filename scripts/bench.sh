#!/usr/bin/env bash
# `make bench`: a release build of Surge on a private PostgreSQL and the dev broker, progress on a simulated clock,
# then the benchmarks. Stops everything it started.
source "$(dirname "$0")/lib.sh"

BENCH="$STATE/bench"
PG_PORT="${SURGE_BENCH_PG_PORT:-55434}"
CONFIGURATION="${SURGE_BENCH_CONFIGURATION:-release}"
RELEASE="$ROOT/.build/$CONFIGURATION"

ensure_dependencies
log "Building ($CONFIGURATION)"
(cd "$ROOT" && swift build -c "$CONFIGURATION")

rm -rf "$BENCH"
mkdir -p "$BENCH/logs"
random_secret >"$BENCH/admin-password"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  pg_stop "$BENCH/pgdata"
}
trap cleanup EXIT

log "Starting PostgreSQL on 127.0.0.1:$PG_PORT"
pg_start "$BENCH/pgdata" "$PG_PORT" "$BENCH/admin-password"
export SURGE_ADMIN_DATABASE_URL="postgres://surge_admin:$(cat "$BENCH/admin-password")@127.0.0.1:$PG_PORT/postgres"
for service in identity progress gateway; do export "SURGE_DB_PASSWORD_${service^^}=$(random_secret)"; done
export INTERNAL_AUTH_SECRET="$(random_secret)"
"$RELEASE/surge-admin" provision --database surge --services identity progress gateway >/dev/null

"$RELEASE/surge-broker" --bootstrap-file "$BENCH/bootstrap" >"$BENCH/logs/broker.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [ -s "$BENCH/bootstrap" ] && break; sleep 0.1; done
bootstrap="$(cat "$BENCH/bootstrap")"

start() {
  local service="$1" port="$2"; shift 2
  local password_var="SURGE_DB_PASSWORD_${service^^}"
  env SURGE_ENV=development LOG_LEVEL=warning HTTP_HOST=127.0.0.1 HTTP_PORT="$port" \
    DATABASE_URL="postgres://surge_$service:${!password_var}@127.0.0.1:$PG_PORT/surge" \
    KAFKA_BOOTSTRAP_SERVERS="$bootstrap" KAFKA_CONSUMER_PROPERTIES="fetch.wait.max.ms=10" "$@" \
    "$RELEASE/surge-$service" >"$BENCH/logs/$service.log" 2>&1 &
  pids+=($!)
  wait_for_url "http://127.0.0.1:$port/readyz" 60 || { echo "surge-$service did not start; see $BENCH/logs" >&2; exit 1; }
}
start identity 18081
start progress 18083 SIMULATED_CLOCK=true JUDGEMENT_INTERVAL_MS=200
start gateway 18080 UPSTREAM_IDENTITY_URL=http://127.0.0.1:18081 UPSTREAM_PROGRESS_URL=http://127.0.0.1:18083 \
  RATE_LIMIT_PER_USER_PER_MINUTE=1000000 RATE_LIMIT_PER_IP_PER_MINUTE=1000000 RATE_LIMIT_CREDENTIALS_PER_MINUTE=1000000

log "Check-in latency versus history length"
"$RELEASE/surge-bench" checkin-latency --gateway http://127.0.0.1:18080 --progress http://127.0.0.1:18083 --kafka "$bootstrap" "$@"
