#!/usr/bin/env bash
# `make bench`: a release build of Surge on a private PostgreSQL and the dev broker, progress on a simulated clock,
# then the benchmarks. Stops everything it started.
#   scripts/bench.sh                             every benchmark
#   SURGE_BENCHES=checkin-throughput scripts/bench.sh   only the check-in's cost, sustained rate and tail beside pgbench -N
#                                                 (SURGE_BENCH_USERS=N; SURGE_BENCH_SUSTAIN_SECONDS=0 skips the rate search)
#   SURGE_BENCHES=checkin-latency scripts/bench.sh [--days N --samples M]   only check-in latency versus history
#   SURGE_BENCHES=gateway scripts/bench.sh       only the gateway's hop beside nginx as a reverse proxy and the services alone
#   SURGE_BENCHES=leaderboard scripts/bench.sh   only the leaderboard's (SURGE_BENCH_MEMBERS=N for a smaller board)
#   SURGE_BENCHES=stream scripts/bench.sh        only the live stream's (check-in → stream and → leaderboard)
#   SURGE_BENCHES=reminders scripts/bench.sh     only the daily reminders' wave (SURGE_BENCH_REMINDER_USERS=N due at one instant)
#   SURGE_BENCHES=badges-rebuild scripts/bench.sh   only the badges' rebuild from offset zero
#   SURGE_BENCHES=leaderboard-rebuild scripts/bench.sh   only the leaderboard's rebuild (a full run times it within the
#                                                 leaderboard's benchmark, after the large board)
#   SURGE_BENCH_PG_STATEMENTS=1 scripts/bench.sh  also PostgreSQL's time per service role and its costliest statements
#                                                 (pg_stat_statements) during each benchmark, seeding included
# Every run writes its figures to bench-results/<UTC time>.json and prints them as one table at the end.
source "$(dirname "$0")/lib.sh"

BENCH="$STATE/bench"
PG_PORT="${SURGE_BENCH_PG_PORT:-55434}"
CONFIGURATION="${SURGE_BENCH_CONFIGURATION:-release}"
RELEASE="$ROOT/.build/$CONFIGURATION"
REDIS_PORT="${SURGE_BENCH_REDIS_PORT:-56379}"
# The leaderboard's and the badges' rebuilds come last: each publishes a flood of events and restarts its service.
BENCHES="${SURGE_BENCHES:-checkin-throughput checkin-latency gateway stream reminders leaderboard badges-rebuild}"

# Redis is the leaderboard's yardstick and nginx the gateway's (never dependencies of Surge); wrk drives HTTP load.
ensure_dependencies redis-server=redis-server redis-benchmark=redis-tools wrk=wrk nginx=nginx-light
# The Swift runtime linked statically, as the production image (Dockerfile) links it: memory and start-up are measured
# on what is deployed.
log "Building ($CONFIGURATION, Swift runtime linked statically)"
(cd "$ROOT" && swift build -c "$CONFIGURATION" --static-swift-stdlib)

rm -rf "$BENCH"
mkdir -p "$BENCH/logs"
random_secret >"$BENCH/admin-password"
pids=()
# The services first (they finish their work while the broker and PostgreSQL are still there), then the rest. A
# benchmark that restarts a service rewrote its process id in the file.
cleanup() {
  local service_pids=() file pid
  for file in "$BENCH"/*.pid; do
    [ -f "$file" ] && [ "$file" != "$BENCH/broker.pid" ] && service_pids+=("$(cat "$file")")
  done
  for pid in "${service_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 150); do
    alive=0
    for pid in "${service_pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  pg_stop "$BENCH/pgdata"
}
trap cleanup EXIT

PG_STATEMENTS="${SURGE_BENCH_PG_STATEMENTS:-0}"
[ "$PG_STATEMENTS" = 1 ] && export PG_EXTRA_OPTIONS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
# With SURGE_BENCH_PG_STATEMENTS=1: `statements reset` before a benchmark, `statements report <name>` after it.
statements() {
  [ "$PG_STATEMENTS" = 1 ] || return 0
  local psql=("$(pg_bin)/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U surge_admin -d surge -v ON_ERROR_STOP=1)
  if [ "$1" = reset ]; then
    PGPASSWORD="$(cat "$BENCH/admin-password")" "${psql[@]}" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
      -c "SELECT pg_stat_statements_reset()" >/dev/null
    return
  fi
  echo
  echo "PostgreSQL during $2 (pg_stat_statements): execution time per service role, the 15 costliest statements, then the services' 20 most called"
  PGPASSWORD="$(cat "$BENCH/admin-password")" "${psql[@]}" -P pager=off \
    -c "SELECT r.rolname AS role, sum(s.calls) AS calls, round(sum(s.total_exec_time)::numeric, 0) AS exec_ms
        FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid GROUP BY r.rolname ORDER BY exec_ms DESC" \
    -c "SELECT r.rolname AS role, s.calls, round(s.total_exec_time::numeric, 0) AS exec_ms,
               round((s.total_exec_time / greatest(s.calls, 1))::numeric, 3) AS mean_ms, left(regexp_replace(s.query, '\s+', ' ', 'g'), 110) AS query
        FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid ORDER BY s.total_exec_time DESC LIMIT 15" \
    -c "SELECT r.rolname AS role, s.calls, round(s.total_exec_time::numeric, 0) AS exec_ms,
               round((s.total_exec_time / greatest(s.calls, 1))::numeric, 3) AS mean_ms, left(regexp_replace(s.query, '\s+', ' ', 'g'), 110) AS query
        FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname <> 'surge_admin' ORDER BY s.calls DESC LIMIT 20"
}

log "Starting PostgreSQL on 127.0.0.1:$PG_PORT"
pg_start "$BENCH/pgdata" "$PG_PORT" "$BENCH/admin-password"
export SURGE_ADMIN_DATABASE_URL="postgres://surge_admin:$(cat "$BENCH/admin-password")@127.0.0.1:$PG_PORT/postgres"
for service in "${SERVICES[@]}"; do export "SURGE_DB_PASSWORD_${service^^}=$(random_secret)"; done
export INTERNAL_AUTH_SECRET="$(random_secret)"
"$RELEASE/surge-admin" provision --database surge >/dev/null

"$RELEASE/surge-broker" --bootstrap-file "$BENCH/bootstrap" >"$BENCH/logs/broker.log" 2>&1 &
pids+=($!)
echo $! >"$BENCH/broker.pid"
for _ in $(seq 1 50); do [ -s "$BENCH/bootstrap" ] && break; sleep 0.1; done
bootstrap="$(cat "$BENCH/bootstrap")"

# Each service starts from a one-line script ($BENCH/start-<service>.sh, exec'ing the binary), so a benchmark can
# start it again; its process id is in $BENCH/<service>.pid. Its port is 1 and the registry's port (18080 and up).
bench_port() { echo "1$(port_of "$1")"; }
write_start_script() {
  local service="$1"; shift
  local password_var="SURGE_DB_PASSWORD_${service^^}"
  {
    printf 'exec'
    printf ' %q' env SURGE_ENV=development LOG_LEVEL=warning HTTP_HOST=127.0.0.1 HTTP_PORT="$(bench_port "$service")" \
      DATABASE_URL="postgres://surge_$service:${!password_var}@127.0.0.1:$PG_PORT/surge" \
      KAFKA_BOOTSTRAP_SERVERS="$bootstrap" KAFKA_CONSUMER_PROPERTIES="fetch.wait.max.ms=10" "$@" "$RELEASE/surge-$service"
    printf ' >>%q 2>&1\n' "$BENCH/logs/$service.log"
  } >"$BENCH/start-$service.sh"
}
# The FCM fake's certificate and a service account for it (the fake grants any assertion a token).
FCM_FAKE_PORT=18443
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$BENCH/fcm-fake-key.pem" -out "$BENCH/fcm-fake-cert.pem" -days 2 -subj /CN=127.0.0.1 \
  -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
openssl genrsa -out "$BENCH/fcm-account.key" 2048 2>/dev/null
python3 -c 'import json, sys; print(json.dumps({"project_id": "surge-bench", "client_email": "bench@surge-bench.iam.gserviceaccount.com",
  "private_key": open(sys.argv[1]).read(), "token_uri": "https://127.0.0.1:" + sys.argv[2] + "/token"}))' \
  "$BENCH/fcm-account.key" "$FCM_FAKE_PORT" >"$BENCH/fcm-account.json"

upstreams=()
for service in "${SERVICES[@]}"; do
  [ "$service" = gateway ] || upstreams+=("UPSTREAM_${service^^}_URL=http://127.0.0.1:$(bench_port "$service")")
done
for service in "${SERVICES[@]}"; do
  case "$service" in
    # Access tokens for an hour: the reminders benchmark seeds 100,000 guests for longer than the default 15 minutes.
    identity) write_start_script identity NOTIFICATIONS_URL="http://127.0.0.1:$(bench_port notifications)" ACCESS_TOKEN_TTL_SECONDS=3600 ;;
    progress) write_start_script progress SIMULATED_CLOCK=true JUDGEMENT_INTERVAL_MS=200 ;;
    leaderboard) write_start_script leaderboard LOG_LEVEL=info ;;
    # The reminders benchmark moves notifications' clock to the instant its wave is due (development only), and pushes
    # to the FCM fake it serves over TLS and HTTP/2 (its certificate trusted through PUSH_CA_FILE).
    notifications) write_start_script notifications SIMULATED_CLOCK=true FCM_CREDENTIALS_FILE="$BENCH/fcm-account.json" \
      FCM_ENDPOINT="https://127.0.0.1:$FCM_FAKE_PORT" PUSH_CA_FILE="$BENCH/fcm-fake-cert.pem" ;;
    gateway) write_start_script gateway "${upstreams[@]}" STREAM_CONNECTIONS_PER_USER=2000 STREAM_CONNECTIONS_PER_REPLICA=20000 RATE_LIMIT_PER_USER_PER_MINUTE=1000000 \
      RATE_LIMIT_PER_IP_PER_MINUTE=1000000 RATE_LIMIT_CREDENTIALS_PER_MINUTE=1000000 ;;
    *) write_start_script "$service" ;;
  esac
done

# A second notifications replica (the reminders benchmark starts it to share a wave): port 2 and the registry's.
sed -e "s/HTTP_PORT=$(bench_port notifications)/HTTP_PORT=2$(port_of notifications)/" -e "s|logs/notifications.log|logs/notifications-2.log|" \
  "$BENCH/start-notifications.sh" >"$BENCH/start-notifications-2.sh"

# `surge-<service> rebuild` with the service's own environment, its report on standard output.
for service in leaderboard badges; do
  sed -e 's/^exec env /env /' -e 's/ >>.*$//' -e "s|\\(\\S*surge-$service\\)\$|LOG_LEVEL=error \\1 rebuild|" \
    "$BENCH/start-$service.sh" >"$BENCH/rebuild-$service.sh"
done

# The other services, paused while a rebuild is timed (each publishes nothing then; the broker and PostgreSQL run on).
paused_during_rebuild() {
  local file
  for file in "$BENCH"/*.pid; do
    case "$file" in */broker.pid | */"$1".pid) ;; *) echo "--pause-pid-file=$file" ;; esac
  done
}

# All eight at once, as an operator's `docker compose up` would: the stack benchmark times launch → every /readyz 200.
ready_urls=()
metrics=()
launched="$(date +%s.%N)"
for service in "${SERVICES[@]}"; do
  bash "$BENCH/start-$service.sh" &
  pids+=($!)
  echo $! >"$BENCH/$service.pid"
  ready_urls+=(--url "http://127.0.0.1:$(bench_port "$service")/readyz")
  metrics+=("http://127.0.0.1:$(bench_port "$service")/metrics")
done
export SURGE_BENCH_COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" SURGE_BENCH_CONFIGURATION="$CONFIGURATION"
mkdir -p "$ROOT/bench-results"
RESULTS="$ROOT/bench-results/$(date -u +%Y-%m-%dT%H%M%SZ).json"
# stdbuf -oL: each line reaches the log as it is printed (standard output into a pipe is otherwise fully buffered).
stdbuf -oL "$RELEASE/surge-bench" stack --launched "$launched" "${ready_urls[@]}" --pid-directory "$BENCH" --phase idle --results "$RESULTS" \
  || { echo "the stack did not start; see $BENCH/logs" >&2; exit 1; }

for bench in $BENCHES; do
  # What the previous benchmark left to the consumers is done first, so that it does not load this one.
  stdbuf -oL "$RELEASE/surge-bench" settle "${metrics[@]/#/--url=}"
  statements reset
  case "$bench" in
    checkin-throughput)
      log "Check-in throughput beside pgbench -N on the same PostgreSQL"
      stdbuf -oL "$RELEASE/surge-bench" checkin-throughput --results "$RESULTS" --gateway http://127.0.0.1:$(bench_port gateway) --progress http://127.0.0.1:$(bench_port progress) --kafka "$bootstrap" \
        --database "postgres://surge_admin:$(cat "$BENCH/admin-password")@127.0.0.1:$PG_PORT/postgres" --pid-directory "$BENCH" \
        --pgdata "$BENCH/pgdata" --users "${SURGE_BENCH_USERS:-256}" --sustain-seconds "${SURGE_BENCH_SUSTAIN_SECONDS:-60}" "${metrics[@]/#/--settle-url=}"
      ;;
    checkin-latency)
      log "Check-in latency versus history length"
      stdbuf -oL "$RELEASE/surge-bench" checkin-latency --results "$RESULTS" --gateway http://127.0.0.1:$(bench_port gateway) --progress http://127.0.0.1:$(bench_port progress) --kafka "$bootstrap" \
        "${metrics[@]/#/--settle-url=}" "$@"
      ;;
    leaderboard)
      log "Leaderboard reads, memory and warm start beside Redis (redis-server on 127.0.0.1:$REDIS_PORT)"
      redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --dir "$BENCH" --logfile "$BENCH/logs/redis.log" &
      pids+=($!)
      for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
      stdbuf -oL "$RELEASE/surge-bench" leaderboard --results "$RESULTS" --gateway http://127.0.0.1:$(bench_port gateway) --leaderboard http://127.0.0.1:$(bench_port leaderboard) \
        --database "postgres://surge_admin:$(cat "$BENCH/admin-password")@127.0.0.1:$PG_PORT/surge" --redis-port "$REDIS_PORT" \
        --pid-file "$BENCH/leaderboard.pid" --start-command "bash $BENCH/start-leaderboard.sh" --log-file "$BENCH/logs/leaderboard.log" \
        --members "${SURGE_BENCH_MEMBERS:-1000000}" --kafka "$bootstrap" --rebuild-command "bash $BENCH/rebuild-leaderboard.sh" \
        --rebuild-events "${SURGE_BENCH_REBUILD_EVENTS:-500000}" $(paused_during_rebuild leaderboard)
      ;;
    gateway)
      log "The gateway's hop beside nginx (nginx-light on 127.0.0.1:18180) and each service alone"
      stdbuf -oL "$RELEASE/surge-bench" gateway --results "$RESULTS" --gateway http://127.0.0.1:$(bench_port gateway) \
        $(for service in identity challenges progress leaderboard badges notifications; do echo "--upstream=$service=http://127.0.0.1:$(bench_port "$service")"; done) \
        --database "postgres://surge_admin:$(cat "$BENCH/admin-password")@127.0.0.1:$PG_PORT/surge" --nginx-port 18180 --nginx-directory "$BENCH/nginx" \
        --pid-directory "$BENCH"
      ;;
    stream)
      log "Live stream: check-in to stream event beside a raw Kafka hop, and 1,000 idle streams"
      stdbuf -oL "$RELEASE/surge-bench" stream --results "$RESULTS" --gateway http://127.0.0.1:$(bench_port gateway) --progress http://127.0.0.1:$(bench_port progress) --kafka "$bootstrap" \
        --gateway-pid-file "$BENCH/gateway.pid"
      ;;
    reminders)
      log "Daily reminders: a wave of ${SURGE_BENCH_REMINDER_USERS:-100000} due at one instant beside a bulk insert of as many rows, then shared by two replicas"
      stdbuf -oL "$RELEASE/surge-bench" reminders --results "$RESULTS" --gateway http://127.0.0.1:$(bench_port gateway) \
        --notifications http://127.0.0.1:$(bench_port notifications) \
        --database "postgres://surge_admin:$(cat "$BENCH/admin-password")@127.0.0.1:$PG_PORT/surge" --users "${SURGE_BENCH_REMINDER_USERS:-100000}" \
        --second-replica-command "bash $BENCH/start-notifications-2.sh" --second-replica-url "http://127.0.0.1:2$(port_of notifications)" \
        --second-replica-pid-file "$BENCH/notifications-2.pid" --fcm-fake-port "$FCM_FAKE_PORT" --fcm-fake-certificate "$BENCH/fcm-fake-cert.pem" \
        --fcm-fake-key "$BENCH/fcm-fake-key.pem" --push-users "${SURGE_BENCH_PUSH_USERS:-20000}" --pid-directory "$BENCH" --pgdata "$BENCH/pgdata"
      ;;
    badges-rebuild | leaderboard-rebuild)
      service="${bench%-rebuild}"
      if [ "$service" = badges ]; then events="${SURGE_BENCH_BADGE_REBUILD_EVENTS:-100000}"; else events="${SURGE_BENCH_REBUILD_EVENTS:-500000}"; fi
      log "${service^} rebuilt from offset zero"
      stdbuf -oL "$RELEASE/surge-bench" rebuild --results "$RESULTS" --service "$service" --kafka "$bootstrap" \
        --events "$events" --pid-file "$BENCH/$service.pid" --start-command "bash $BENCH/start-$service.sh" \
        --rebuild-command "bash $BENCH/rebuild-$service.sh" --ready-url "http://127.0.0.1:$(bench_port "$service")/readyz" \
        $(paused_during_rebuild "$service")
      ;;
    *) echo "unknown benchmark $bench (checkin-throughput, checkin-latency, gateway, leaderboard, stream, reminders, badges-rebuild, leaderboard-rebuild)" >&2; exit 2 ;;
  esac
  statements report "$bench"
done
stdbuf -oL "$RELEASE/surge-bench" stack --pid-directory "$BENCH" --phase loaded --results "$RESULTS"
stdbuf -oL "$RELEASE/surge-bench" report --results "$RESULTS"
