#!/usr/bin/env bash
# The whole system on one machine without Docker: `scripts/local.sh up` or `scripts/local.sh down`.
source "$(dirname "$0")/lib.sh"

# A second stack beside `make run` (scripts/api-fuzz.sh) sets its own state folder and moves every port by an offset.
LOCAL="${SURGE_LOCAL_STATE:-$STATE/local}"
PG_PORT="${SURGE_PG_PORT:-55432}"
PORT_OFFSET="${SURGE_PORT_OFFSET:-0}"
service_port() { echo $(($(port_of "$1") + PORT_OFFSET)); }

up() {
  ensure_dependencies
  ensure_chart_js
  # Another stack on these ports (a second `make run`, `make bench`) would answer in this one's place.
  local port busy=()
  for service in "${SERVICES[@]}"; do
    port="$(service_port "$service")"
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then busy+=("$port"); fi
  done
  if [ ${#busy[@]} -gt 0 ]; then
    echo "Ports ${busy[*]} are already in use on 127.0.0.1 (another Surge stack?): stop it first." >&2
    exit 1
  fi
  log "Building"
  (cd "$ROOT" && swift build)
  mkdir -p "$LOCAL/run" "$LOCAL/logs"
  if [ ! -f "$LOCAL/secrets.env" ]; then
    umask 077
    {
      echo "SURGE_ADMIN_PASSWORD=$(random_secret)"
      for service in "${SERVICES[@]}"; do echo "SURGE_DB_PASSWORD_${service^^}=$(random_secret)"; done
    } >"$LOCAL/secrets.env"
  fi
  grep -q '^INTERNAL_AUTH_SECRET=' "$LOCAL/secrets.env" || echo "INTERNAL_AUTH_SECRET=$(random_secret)" >>"$LOCAL/secrets.env"

  set -a; source "$LOCAL/secrets.env"; set +a
  printf '%s' "$SURGE_ADMIN_PASSWORD" >"$LOCAL/admin-password"

  log "Starting PostgreSQL on 127.0.0.1:$PG_PORT (data in $LOCAL/pgdata)"
  pg_start "$LOCAL/pgdata" "$PG_PORT" "$LOCAL/admin-password"
  export SURGE_ADMIN_DATABASE_URL="postgres://surge_admin:$SURGE_ADMIN_PASSWORD@127.0.0.1:$PG_PORT/postgres"
  "$BIN/surge-admin" provision --database surge >/dev/null

  log "Starting the local Kafka-protocol broker (in memory, development only)"
  rm -f "$LOCAL/run/kafka-bootstrap"
  nohup "$BIN/surge-broker" --bootstrap-file "$LOCAL/run/kafka-bootstrap" >"$LOCAL/logs/broker.log" 2>&1 &
  echo $! >"$LOCAL/run/broker.pid"
  for _ in $(seq 1 50); do [ -s "$LOCAL/run/kafka-bootstrap" ] && break; sleep 0.1; done
  local bootstrap
  bootstrap="$(cat "$LOCAL/run/kafka-bootstrap")"

  local upstreams=() service
  for service in "${SERVICES[@]}"; do
    [ "$service" = gateway ] || upstreams+=("UPSTREAM_${service^^}_URL=http://127.0.0.1:$(service_port "$service")")
  done
  for service in "${SERVICES[@]}"; do
    local password_var="SURGE_DB_PASSWORD_${service^^}" extra=()
    [ "$service" = gateway ] && extra=("${upstreams[@]}")
    [ "$service" = identity ] && extra=("NOTIFICATIONS_URL=http://127.0.0.1:$(service_port notifications)")
    log "Starting surge-$service on 127.0.0.1:$(service_port "$service")"
    env SURGE_ENV=development LOG_FORMAT=text HTTP_HOST=127.0.0.1 HTTP_PORT="$(service_port "$service")" "${extra[@]}" \
      DATABASE_URL="postgres://surge_$service:${!password_var}@127.0.0.1:$PG_PORT/surge" \
      KAFKA_BOOTSTRAP_SERVERS="$bootstrap" KAFKA_CONSUMER_PROPERTIES="fetch.wait.max.ms=10" \
      INTERNAL_AUTH_SECRET="$INTERNAL_AUTH_SECRET" SIMULATED_CLOCK="${SIMULATED_CLOCK:-false}" \
      SURGE_COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
      nohup "$BIN/surge-$service" >"$LOCAL/logs/$service.log" 2>&1 &
    echo $! >"$LOCAL/run/$service.pid"
  done
  for service in "${SERVICES[@]}"; do
    wait_for_url "http://127.0.0.1:$(service_port "$service")/readyz" 60 || {
      echo "surge-$service did not become ready; see $LOCAL/logs/$service.log" >&2; exit 1; }
  done
  echo
  echo "Surge is running."
  echo "  Gateway:  http://127.0.0.1:$(service_port gateway)   (try: curl -X POST http://127.0.0.1:$(service_port gateway)/v1/auth/guest -H 'content-type: application/json' -d '{\"displayName\":\"Sam\",\"timeZone\":\"Europe/Rome\"}')"
  echo "  Logs:     $LOCAL/logs/"
  if [ "$LOCAL" = "$STATE/local" ]; then
    echo "  Stop:     make stop"
  else
    echo "  Stop:     SURGE_LOCAL_STATE=$LOCAL $ROOT/scripts/local.sh down"
  fi
}

# Services first, and only once they have exited (each drains its consumer batch, relay and producer against the
# database and the broker): stopping those under them would make every service wait out its shutdown deadline.
down() {
  local pidfile pid service pids=()
  for service in "${SERVICES[@]}"; do
    pidfile="$LOCAL/run/$service.pid"
    [ -f "$pidfile" ] || continue
    pid="$(cat "$pidfile")"
    kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    rm -f "$pidfile"
  done
  wait_for_exit 15 "${pids[@]}"
  for pidfile in "$LOCAL"/run/*.pid; do
    [ -f "$pidfile" ] || continue
    pid="$(cat "$pidfile")"
    kill -TERM "$pid" 2>/dev/null || true
    wait_for_exit 5 "$pid"
    rm -f "$pidfile"
  done
  pg_stop "$LOCAL/pgdata"
  echo "Stopped."
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
