#!/usr/bin/env bash
# `make api-fuzz`: a short, bounded schemathesis pass over the public API, as an outside client sees it. Starts a private
# stack (its own PostgreSQL, broker and ports 28080 and up: each service's own plus 20000, so `make run` and `make bench` can stay up), signs up a guest for a token, runs
# schemathesis against docs/openapi.json, prints what it found and stops the stack, pass or fail.
#
# Settings (environment): API_FUZZ_MAX_EXAMPLES (default 5 per operation and phase), API_FUZZ_MAX_TIME (seconds,
# default 240), API_FUZZ_SEED (default 1, so runs are comparable; empty for a random one), API_FUZZ_FAIL_ON (`all`,
# the default: exit non-zero on any finding; `server-errors`: only on a 5xx, as CI runs it while the document still
# lets schemathesis send requests the server refuses). Reports land in .surge/api-fuzz/report/.
source "$(dirname "$0")/lib.sh"

SCHEMATHESIS_VERSION=4.32.5
FUZZ="$STATE/api-fuzz"
export SURGE_LOCAL_STATE="$FUZZ/stack" SURGE_PG_PORT="${API_FUZZ_PG_PORT:-55436}" SURGE_PORT_OFFSET="${API_FUZZ_PORT_OFFSET:-20000}"
GATEWAY="http://127.0.0.1:$((8080 + SURGE_PORT_OFFSET))"
# Every request comes from one address: the per-IP, per-user and credential budgets would answer 429 within seconds.
export RATE_LIMIT_PER_IP_PER_MINUTE=1000000 RATE_LIMIT_PER_USER_PER_MINUTE=1000000 RATE_LIMIT_CREDENTIALS_PER_MINUTE=1000000

# schemathesis in its own virtual environment, pinned, so the pass does not depend on what else pip has installed.
VENV="$FUZZ/venv"
if [ ! -x "$VENV/bin/st" ] || [ "$("$VENV/bin/st" --version 2>/dev/null | awk '{print $NF}')" != "$SCHEMATHESIS_VERSION" ]; then
  log "Installing schemathesis $SCHEMATHESIS_VERSION into $VENV"
  python3 -m venv "$VENV" 2>/dev/null || {
    [ "$(id -u)" -eq 0 ] && { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; }
    python3 -m venv "$VENV"
  }
  "$VENV/bin/pip" install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

rm -rf "$SURGE_LOCAL_STATE" "$FUZZ/report"
mkdir -p "$FUZZ/report"
trap '"$ROOT/scripts/local.sh" down >/dev/null' EXIT
"$ROOT/scripts/local.sh" up >/dev/null

log "Signing up a guest for a token"
TOKEN=$(curl -fsS -X POST "$GATEWAY/v1/auth/guest" -H 'content-type: application/json' \
  -d '{"displayName":"Schemathesis","timeZone":"Europe/Rome"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"]["accessToken"])')

log "schemathesis against $GATEWAY (at most ${API_FUZZ_MAX_EXAMPLES:-5} examples per operation, ${API_FUZZ_MAX_TIME:-240} s)"
seed=()
[ -n "${API_FUZZ_SEED-1}" ] && seed=(--seed "${API_FUZZ_SEED-1}")
# schemathesis keeps its example database in .schemathesis/ of the working directory: under .surge, not the repository.
cd "$FUZZ"
status=0
# DELETE /v1/me would delete the account whose token every other request uses; GET /v1/stream never ends (a live
# event stream), while schemathesis reads whole bodies, so it is left to StreamSystemTests. One worker: with two, CPython 3.11's
# parser, which hypothesis calls from both threads, now and then fails with "AST constructor recursion depth
# mismatch", a tool error that is not the API's. The hooks give the document's own
# string format (`iana-time-zone`) its values. The admin routes (/v1/admin/...) answer 404 to every caller without the
# admin role, token or none, by design (they are hidden, never 401), which schemathesis reports as "missing required
# header accepted"; AdminAccessTests, KPIRouterTests and AnalyticsSystemTests cover them.
SCHEMATHESIS_HOOKS="$ROOT/scripts/api-fuzz-hooks.py" "$VENV/bin/st" --no-color run "$ROOT/docs/openapi.json" --url "$GATEWAY" -H "Authorization: Bearer $TOKEN" \
  --checks all --max-examples "${API_FUZZ_MAX_EXAMPLES:-5}" --max-time "${API_FUZZ_MAX_TIME:-240}" "${seed[@]}" \
  --workers 1 --request-timeout 10 --exclude-name "DELETE /v1/me" --exclude-name "GET /v1/stream" --exclude-path-regex '^/v1/admin/' \
  --report junit,ndjson --report-dir "$FUZZ/report" 2>&1 | tee "$FUZZ/report/output.txt" || status=$?

# The summary's "Failures:" block lists one line per kind, "❌ ST202 Schema-valid request rejected: 47"; ST101 and
# ST102 are the server errors (5xx).
failures=$(sed -n '/^Failures:/,/^$/p' "$FUZZ/report/output.txt" | { grep -oE ': [0-9]+$' || true; } | awk '{ n += $2 } END { print n + 0 }')
server_errors=$(sed -n '/^Failures:/,/^$/p' "$FUZZ/report/output.txt" | { grep -E 'ST10[12] ' || true; } | { grep -oE ': [0-9]+$' || true; } | awk '{ n += $2 } END { print n + 0 }')
echo "api-fuzz: $failures findings, $server_errors of them server errors (schemathesis exited $status; reports in ${FUZZ#"$ROOT/"}/report)"
case "${API_FUZZ_FAIL_ON:-all}" in
  # A run that did not finish, or met errors (timeouts, refused connections) rather than failed checks, fails too.
  server-errors) [ "$server_errors" -eq 0 ] && grep -q ' SUMMARY ' "$FUZZ/report/output.txt" && ! grep -q '^Errors:' "$FUZZ/report/output.txt" ;;
  *) exit "$status" ;;
esac
