#!/usr/bin/env bash
# Installs what the dashboard's browser check needs (Debian's chromium, chromium-driver, libjs-chart.js and
# python3-venv, as root when missing) and selenium in .surge/browser/venv, then prints the venv's python.
#   scripts/ensure-browser.sh && .surge/browser/venv/bin/python scripts/check-kpi-dashboard-in-browser.py ...
source "$(dirname "$0")/lib.sh"
ensure_browser
echo "$BROWSER_VENV/bin/python"
