# Shared helpers for the local stack and the test run. Sourced, not executed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="$ROOT/.surge"
BIN="$ROOT/.build/debug"
SERVICES=(identity challenges progress leaderboard badges notifications analytics gateway)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

port_of() {
  case "$1" in
    gateway) echo 8080 ;; identity) echo 8081 ;; challenges) echo 8082 ;; progress) echo 8083 ;;
    leaderboard) echo 8084 ;; badges) echo 8085 ;; notifications) echo 8086 ;; analytics) echo 8087 ;;
  esac
}

pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && echo "$dir"
}

# Installs what a fresh Debian machine lacks (as root), or says exactly what to install. Extra arguments name more
# tools as command=package (e.g. wrk=wrk).
ensure_dependencies() {
  local missing=() tool
  for tool in "$@"; do command -v "${tool%%=*}" >/dev/null || missing+=("${tool#*=}"); done
  command -v swift >/dev/null || { echo "Swift 6 is required: https://www.swift.org/install/linux/" >&2; exit 1; }
  pkg-config --exists rdkafka 2>/dev/null || missing+=(librdkafka-dev pkg-config)
  [ -n "$(pg_bin)" ] || missing+=(postgresql)
  [ -d /usr/share/zoneinfo/Europe ] || missing+=(tzdata)
  command -v curl >/dev/null || missing+=(curl)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    log "Installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "Missing packages. Install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
}

# Chart.js for the gateway's KPI dashboard (/admin/chart.js): Debian's libjs-chart.js. Installed as root when missing;
# otherwise a hint, and the dashboard's chart.js answers 503 until it is installed.
CHART_JS_FILE=/usr/share/javascript/chart.js/chart.min.js
ensure_chart_js() {
  [ -f "$CHART_JS_FILE" ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    log "Installing libjs-chart.js (Chart.js for the KPI dashboard)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libjs-chart.js >/dev/null
  else
    echo "The KPI dashboard needs Chart.js: sudo apt-get install -y libjs-chart.js" >&2
  fi
}

# What scripts/check-kpi-dashboard-in-browser.py needs: headless Chromium and its driver, Chart.js, and selenium
# (pinned) in its own virtual environment under .surge/browser/venv. Installs the Debian packages as root, or says
# which to install.
# (4.51.0: 4.52.0 wants a certifi newer than some package mirrors carry.)
SELENIUM_VERSION=4.51.0
BROWSER_VENV="$STATE/browser/venv"
ensure_browser() {
  local missing=()
  command -v chromium >/dev/null || missing+=(chromium)
  command -v chromedriver >/dev/null || missing+=(chromium-driver)
  [ -f "$CHART_JS_FILE" ] || missing+=(libjs-chart.js)
  python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
      log "Installing ${missing[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      echo "Missing packages. Install them with:" >&2
      echo "  sudo apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  if [ "$("$BROWSER_VENV/bin/python" -c 'import selenium; print(selenium.__version__)' 2>/dev/null)" != "$SELENIUM_VERSION" ]; then
    log "Installing selenium $SELENIUM_VERSION into ${BROWSER_VENV#"$ROOT/"}"
    python3 -m venv "$BROWSER_VENV"
    "$BROWSER_VENV/bin/pip" install -q --disable-pip-version-check "selenium==$SELENIUM_VERSION"
  fi
}

# Debian's prometheus: the observability test scrapes a stack with it (and validate-deploy checks its configuration).
ensure_prometheus() {
  command -v prometheus >/dev/null && return 0
  if [ "$(id -u)" -eq 0 ]; then
    log "Installing prometheus"
    apt-get update -qq
    # No recommends: the node exporter and the web UI's extras are not needed.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "Missing package. Install it with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends prometheus" >&2
    exit 1
  fi
}

# Runs a PostgreSQL server binary as a non-root user (initdb refuses root).
as_pg_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

random_secret() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# pg_start DATA_DIR PORT PASSWORD_FILE: a private cluster listening on 127.0.0.1:PORT, superuser surge_admin.
pg_start() {
  local data="$1" port="$2" password_file="$3" bin
  bin="$(pg_bin)"
  mkdir -p "$data"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$data" "$password_file"; fi
  chmod 700 "$data"
  if [ ! -f "$data/PG_VERSION" ]; then
    as_pg_user "$bin/initdb" -D "$data" -U surge_admin --pwfile="$password_file" --auth=scram-sha-256 \
      --encoding=UTF8 --locale=C.UTF-8 >"$data.initdb.log" 2>&1 || { cat "$data.initdb.log" >&2; exit 1; }
  fi
  as_pg_user "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $data -c max_connections=${PG_MAX_CONNECTIONS:-300} -c random_page_cost=1.1 -c fsync=${PG_FSYNC:-on} ${PG_EXTRA_OPTIONS:-}" start >/dev/null
}

pg_stop() {
  local data="$1"
  [ -f "$data/postmaster.pid" ] || return 0
  as_pg_user "$(pg_bin)/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
}

# Restarts the server of a data directory with the options it was started with (postmaster.opts).
pg_restart() {
  as_pg_user "$(pg_bin)/pg_ctl" -D "$1" -l "$1/server.log" -m fast -w -t 60 restart >/dev/null
}

# wait_for_exit SECONDS PID...: waits until none of the processes is alive, or the seconds have passed.
wait_for_exit() {
  local seconds="$1" i pid alive
  shift
  for ((i = 0; i < seconds * 10; i++)); do
    alive=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 0 ] && return 0
    sleep 0.1
  done
}

# Waits until a URL answers 200, or fails after the given seconds.
wait_for_url() {
  local url="$1" seconds="$2" i
  for ((i = 0; i < seconds * 5; i++)); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}
