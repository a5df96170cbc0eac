#!/usr/bin/env python3
"""Loads the gateway's KPI dashboard in headless Chromium and checks that every chart rendered with data.

    scripts/ensure-browser.sh   # Debian's chromium + chromium-driver + libjs-chart.js, selenium in .surge/browser/venv
    .surge/browser/venv/bin/python scripts/check-kpi-dashboard-in-browser.py \\
        http://127.0.0.1:8080 admin@example.com 'passphrase' 2026-11-01 2026-11-24 /tmp/dashboard.png

It opens <gateway>/admin/, signs in with the e-mail and password, sets the date range, waits (up to --timeout seconds,
polling, no fixed sleeps) for window.surgeDashboard.ready with the report of that range, then asserts that every
canvas[data-kpi] has a Chart whose first dataset has at least one non-null point. It saves a PNG screenshot of the
whole page (also when a check fails) and exits 0, or 1 with one line saying what is wrong (2 for bad arguments).
"""

import argparse
import datetime
import os
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


class CheckFailed(Exception):
    pass


def parse_arguments():
    parser = argparse.ArgumentParser(description="Check the KPI dashboard in headless Chromium.")
    parser.add_argument("gateway", help="the gateway's base URL, e.g. http://127.0.0.1:8080")
    parser.add_argument("email", help="an admin account's e-mail address")
    parser.add_argument("password", help="its password")
    parser.add_argument("date_from", metavar="from", help="first day, YYYY-MM-DD")
    parser.add_argument("date_to", metavar="to", help="last day, YYYY-MM-DD")
    parser.add_argument("screenshot", help="where to save the PNG screenshot")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for each step (default 60)")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--chromedriver", default=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    arguments = parser.parse_args()
    for name in ("date_from", "date_to"):
        try:
            datetime.date.fromisoformat(getattr(arguments, name))
        except ValueError:
            parser.error(f"{name[5:]} must be a date such as 2026-11-24, not {getattr(arguments, name)!r}")
    if arguments.date_from > arguments.date_to:
        parser.error("from is after to")
    return arguments


def start_browser(arguments):
    options = webdriver.ChromeOptions()
    options.binary_location = arguments.chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,1000",
                 "--lang=en-GB"):
        options.add_argument(flag)
    # The driver is Debian's: selenium must not try to download one.
    os.environ.setdefault("SE_OFFLINE", "true")
    return webdriver.Chrome(service=Service(executable_path=arguments.chromedriver), options=options)


STATE = "return window.surgeDashboard ? {ready: window.surgeDashboard.ready, error: window.surgeDashboard.error, " \
        "from: window.surgeDashboard.report && window.surgeDashboard.report.from, " \
        "to: window.surgeDashboard.report && window.surgeDashboard.report.to} : null;"


def wait_for(driver, timeout, what, condition):
    """Polls `condition` until it returns something truthy; a dashboard error ends the wait at once."""
    def step(driver):
        state = driver.execute_script(STATE)
        if state and state.get("error"):
            raise CheckFailed(f"the dashboard says: {state['error']}")
        return condition(driver, state)
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(step)
    except TimeoutException:
        message = driver.execute_script("var m = document.getElementById('message'); return m && !m.hidden ? m.textContent : '';")
        raise CheckFailed(f"timed out after {timeout:g} s waiting for {what}" + (f" (page says: {message})" if message else ""))


CHARTS = """
var found = [];
document.querySelectorAll('canvas[data-kpi]').forEach(function (canvas) {
  var id = canvas.getAttribute('data-kpi');
  var charts = (window.surgeDashboard && window.surgeDashboard.charts) || {};
  var chart = charts[id] || (window.Chart && window.Chart.getChart ? window.Chart.getChart(canvas) : null);
  var data = chart && chart.data && chart.data.datasets && chart.data.datasets[0] ? chart.data.datasets[0].data : [];
  var points = data.filter(function (v) { return v !== null && v !== undefined && !(typeof v === 'number' && isNaN(v)); }).length;
  found.push({id: id, chart: !!chart, sameCanvas: !!chart && chart.canvas === canvas, points: points});
});
var report = window.surgeDashboard && window.surgeDashboard.report;
return {charts: found, kpis: report ? report.kpis.map(function (k) { return k.id; }) : []};
"""


def check(driver, arguments):
    base = arguments.gateway.rstrip("/")
    driver.get(base + "/admin/")
    wait_for(driver, arguments.timeout, "the sign-in form",
             lambda d, state: d.find_elements(By.ID, "email") and d.find_element(By.ID, "email").is_displayed())
    driver.find_element(By.ID, "email").send_keys(arguments.email)
    driver.find_element(By.ID, "password").send_keys(arguments.password)
    driver.find_element(By.ID, "sign-in-button").click()
    # Signing in loads the default range (the last 28 days); let that finish before asking for another.
    wait_for(driver, arguments.timeout, "the sign-in and the first load",
             lambda d, state: d.find_element(By.ID, "dashboard").is_displayed() and state and state.get("ready"))
    driver.execute_script(
        "document.getElementById('from').value = arguments[0]; document.getElementById('to').value = arguments[1];",
        arguments.date_from, arguments.date_to)
    driver.find_element(By.ID, "show").click()
    wait_for(driver, arguments.timeout, f"the KPIs from {arguments.date_from} to {arguments.date_to}",
             lambda d, state: state and state.get("ready") and state.get("from") == arguments.date_from
             and state.get("to") == arguments.date_to)
    result = driver.execute_script(CHARTS)
    charts = result["charts"]
    if not charts:
        raise CheckFailed("no canvas[data-kpi] on the page")
    problems = []
    missing = sorted(set(result["kpis"]) - {chart["id"] for chart in charts})
    if missing:
        problems.append("no chart for " + ", ".join(missing))
    for chart in charts:
        if not chart["chart"]:
            problems.append(f"{chart['id']}: no Chart on its canvas")
        elif not chart["sameCanvas"]:
            problems.append(f"{chart['id']}: its Chart draws on another canvas")
        elif chart["points"] < 1:
            problems.append(f"{chart['id']}: no data points in its first dataset")
    if problems:
        raise CheckFailed("; ".join(problems))
    return charts


def screenshot(driver, path):
    height = driver.execute_script("return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight);")
    driver.set_window_size(1400, min(max(int(height) + 40, 800), 8000))
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    if not driver.save_screenshot(path):
        raise CheckFailed(f"could not save the screenshot to {path}")


def main():
    arguments = parse_arguments()
    try:
        driver = start_browser(arguments)
    except WebDriverException as error:
        print(f"dashboard check: FAILED: Chromium did not start ({error.msg}); run scripts/ensure-browser.sh", file=sys.stderr)
        return 1
    try:
        try:
            charts = check(driver, arguments)
        except CheckFailed as failure:
            try:
                screenshot(driver, arguments.screenshot)
                saved = f" (screenshot: {arguments.screenshot})"
            except Exception:  # the failure matters more than the screenshot
                saved = ""
            print(f"dashboard check: FAILED: {failure}{saved}", file=sys.stderr)
            return 1
        except WebDriverException as error:
            print(f"dashboard check: FAILED: the browser reported: {error.msg}", file=sys.stderr)
            return 1
        screenshot(driver, arguments.screenshot)
        summary = ", ".join(f"{chart['id']} {chart['points']}" for chart in charts)
        print(f"dashboard check: OK: {len(charts)} charts with data points ({summary}); screenshot {arguments.screenshot}")
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
