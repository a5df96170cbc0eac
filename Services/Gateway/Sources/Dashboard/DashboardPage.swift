// The KPI dashboard: plain HTML and JavaScript, with Chart.js (window.Chart) from /admin/chart.js. It holds no data:
// it signs in with e-mail and password (POST /v1/auth/sign-in), keeps the tokens in sessionStorage, and reads
// GET /v1/admin/kpis?from=&to= and GET /v1/admin/kpis.csv with the bearer token. Each chart's canvas has
// data-kpi="<id>"; after rendering, window.surgeDashboard = { ready: true, charts: { <id>: Chart } } for browser tests
// (scripts/check-kpi-dashboard-in-browser.py). The texts below start at column 0 so they can be read out of this file as they are.

enum DashboardPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Surge KPIs</title>
<style>
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1d2330; background: #f5f6f8; }
  header { background: #1d2330; color: #fff; padding: 12px 24px; display: flex; align-items: center; gap: 16px; }
  header h1 { font-size: 18px; margin: 0; flex: 1; }
  main { padding: 16px 24px; max-width: 1200px; margin: 0 auto; }
  form { display: flex; flex-wrap: wrap; gap: 12px; align-items: end; margin-bottom: 16px; }
  label { display: flex; flex-direction: column; font-size: 13px; gap: 4px; }
  input { font: inherit; padding: 6px 8px; border: 1px solid #b8bfcc; border-radius: 4px; }
  button { font: inherit; padding: 7px 14px; border: 0; border-radius: 4px; background: #2b6cb0; color: #fff; cursor: pointer; }
  button.secondary { background: #5a6475; }
  button:disabled { opacity: .6; cursor: default; }
  #message { padding: 10px 14px; border-radius: 4px; margin-bottom: 16px; }
  #message.error { background: #fde2e1; color: #8a1c17; }
  #message.info { background: #e3edf9; color: #1d3f6b; }
  #charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px; }
  .kpi { background: #fff; border-radius: 6px; padding: 12px 16px; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
  .kpi h2 { font-size: 15px; margin: 0 0 4px; }
  .kpi .summary { font-size: 13px; color: #5a6475; margin-bottom: 8px; }
  .kpi .met { color: #1e7b34; font-weight: 600; }
  .kpi .missed { color: #a8321f; font-weight: 600; }
  .plot { position: relative; height: 240px; }
  table { border-collapse: collapse; background: #fff; margin-top: 20px; font-size: 13px; }
  th, td { padding: 6px 10px; border-bottom: 1px solid #e3e6eb; text-align: right; }
  th:first-child, td:first-child { text-align: left; }
  [hidden] { display: none !important; }
</style>
<script src="/admin/chart.js" defer></script>
<script src="/admin/dashboard.js" defer></script>
</head>
<body>
<header>
  <h1>Surge KPIs</h1>
  <span id="who"></span>
  <button id="sign-out" class="secondary" type="button" hidden>Sign out</button>
</header>
<main>
  <div id="message" hidden></div>
  <section id="sign-in-section">
    <form id="sign-in">
      <label>E-mail <input id="email" name="email" type="email" autocomplete="username" required></label>
      <label>Password <input id="password" name="password" type="password" autocomplete="current-password" required></label>
      <button id="sign-in-button" type="submit">Sign in</button>
    </form>
  </section>
  <section id="dashboard" hidden>
    <form id="range">
      <label>From <input id="from" name="from" type="date" required></label>
      <label>To <input id="to" name="to" type="date" required></label>
      <button id="show" type="submit">Show</button>
      <button id="download" class="secondary" type="button">Download CSV</button>
    </form>
    <p id="generated" class="summary"></p>
    <div id="charts"></div>
    <div id="cohorts"></div>
  </section>
</main>
</body>
</html>
"""#

    static let script = #"""
"use strict";
(function () {
  var SESSION_KEY = "surge.dashboard.session";
  var charts = {};
  window.surgeDashboard = { ready: false, charts: charts, error: null };

  function $(id) { return document.getElementById(id); }

  function localDay(date) {
    var m = String(date.getMonth() + 1).padStart(2, "0");
    var d = String(date.getDate()).padStart(2, "0");
    return date.getFullYear() + "-" + m + "-" + d;
  }

  function show(text, kind) {
    var box = $("message");
    if (!text) { box.hidden = true; box.textContent = ""; return; }
    box.hidden = false;
    box.className = kind || "info";
    box.textContent = text;
  }

  function fail(text) {
    window.surgeDashboard.ready = false;
    window.surgeDashboard.error = text;
    show(text, "error");
  }

  // Tokens live in sessionStorage: gone when the tab closes.
  function session() {
    try { return JSON.parse(sessionStorage.getItem(SESSION_KEY)); } catch (e) { return null; }
  }
  function keep(tokens) {
    sessionStorage.setItem(SESSION_KEY, JSON.stringify({
      accessToken: tokens.accessToken, refreshToken: tokens.refreshToken,
      accessTokenExpiresAt: tokens.accessTokenExpiresAt
    }));
  }

  // The (unverified) claims of the access token: for the page's own decisions only; the gateway decides.
  function claims(token) {
    try {
      var part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      while (part.length % 4) { part += "="; }
      return JSON.parse(atob(part));
    } catch (e) { return {}; }
  }

  async function problemText(response) {
    try { var problem = await response.json(); return problem.detail || problem.title || ("HTTP " + response.status); }
    catch (e) { return "HTTP " + response.status; }
  }

  async function refresh() {
    var current = session();
    if (!current || !current.refreshToken) { return false; }
    var response = await fetch("/v1/auth/refresh", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ refreshToken: current.refreshToken })
    });
    if (!response.ok) { sessionStorage.removeItem(SESSION_KEY); return false; }
    keep((await response.json()).tokens);
    return true;
  }

  // A GET with the bearer token; an access token about to expire is refreshed first. An admin route answers 404 to an
  // expired token as to a non-admin, so on 404 the token is refreshed once (a role granted since sign-in arrives so).
  async function authorizedGet(url) {
    var current = session();
    if (!current) { throw new Error("signed-out"); }
    if (new Date(current.accessTokenExpiresAt).getTime() - Date.now() < 30000) { await refresh(); }
    var attempt = async function () {
      var now = session();
      if (!now) { throw new Error("signed-out"); }
      return fetch(url, { headers: { "Authorization": "Bearer " + now.accessToken } });
    };
    var response = await attempt();
    if (response.status === 404 && await refresh()) { response = await attempt(); }
    return response;
  }

  function notAdminText() {
    return "Not an admin: this account has no admin role (404). An operator grants it with "
      + "`surge-admin grant-admin --email <address>`; it reaches the account's token at its next refresh or sign-in.";
  }

  function showSignedIn(signedIn) {
    $("sign-in-section").hidden = signedIn;
    $("dashboard").hidden = !signedIn;
    $("sign-out").hidden = !signedIn;
    var current = session();
    var who = signedIn && current ? claims(current.accessToken) : {};
    $("who").textContent = signedIn ? ((who.roles || []).indexOf("admin") >= 0 ? "admin" : "signed in (not an admin)") : "";
  }

  async function signIn(event) {
    event.preventDefault();
    $("sign-in-button").disabled = true;
    show("Signing in…", "info");
    try {
      var response = await fetch("/v1/auth/sign-in", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email: $("email").value, password: $("password").value, deviceName: "KPI dashboard" })
      });
      if (response.status === 401) { fail("Wrong e-mail or password."); return; }
      if (response.status === 429) {
        fail("Too many attempts: try again in " + (response.headers.get("Retry-After") || "a few") + " seconds."); return;
      }
      if (!response.ok) { fail("Sign-in failed: " + await problemText(response)); return; }
      keep((await response.json()).tokens);
      $("password").value = "";
      show("", null);
      showSignedIn(true);
      await load();
    } catch (e) {
      fail("Sign-in failed: " + e.message);
    } finally {
      $("sign-in-button").disabled = false;
    }
  }

  async function signOut() {
    var current = session();
    sessionStorage.removeItem(SESSION_KEY);
    destroyCharts();
    showSignedIn(false);
    show("Signed out.", "info");
    if (current && current.refreshToken) {
      try {
        await fetch("/v1/auth/sign-out", {
          method: "POST", headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ refreshToken: current.refreshToken })
        });
      } catch (e) { /* signed out locally anyway */ }
    }
  }

  function range() {
    var from = $("from").value, to = $("to").value;
    if (!from || !to) { fail("Pick both dates."); return null; }
    if (from > to) { fail("The start date is after the end date."); return null; }
    return "from=" + encodeURIComponent(from) + "&to=" + encodeURIComponent(to);
  }

  function destroyCharts() {
    Object.keys(charts).forEach(function (id) { charts[id].destroy(); delete charts[id]; });
    $("charts").textContent = "";
    $("cohorts").textContent = "";
    $("generated").textContent = "";
    window.surgeDashboard.ready = false;
  }

  async function load(event) {
    if (event) { event.preventDefault(); }
    var query = range();
    if (!query) { return; }
    window.surgeDashboard.ready = false;
    window.surgeDashboard.error = null;
    show("Loading…", "info");
    var response;
    try {
      response = await authorizedGet("/v1/admin/kpis?" + query);
    } catch (e) {
      if (e.message === "signed-out") { showSignedIn(false); fail("Your session ended: sign in again."); return; }
      fail("The KPIs could not be loaded: " + e.message); return;
    }
    if (response.status === 404) { destroyCharts(); fail(notAdminText()); return; }
    if (!response.ok) { destroyCharts(); fail("The KPIs could not be loaded: " + await problemText(response)); return; }
    var report = await response.json();
    if (typeof window.Chart !== "function") { fail("Chart.js did not load (/admin/chart.js): is Debian's libjs-chart.js installed?"); return; }
    render(report);
    show("", null);
    window.surgeDashboard.report = report;
    window.surgeDashboard.ready = true;
  }

  function isRatio(kpi) { return kpi.unit === "ratio"; }

  function format(kpi, value) {
    if (value === null || value === undefined) { return "–"; }
    return isRatio(kpi) ? (value * 100).toFixed(1) + " %" : value.toFixed(1) + " " + kpi.unit;
  }

  function plotted(kpi, value) {
    if (value === null || value === undefined) { return null; }
    return isRatio(kpi) ? Math.round(value * 10000) / 100 : value;
  }

  function meets(kpi, value) {
    return kpi.direction === "atMost" ? value <= kpi.target : value >= kpi.target;
  }

  function render(report) {
    destroyCharts();
    $("generated").textContent = "From " + report.from + " to " + report.to + ", computed " + report.generatedAt + ".";
    var labels = report.days.map(function (day) { return day.date; });
    report.kpis.forEach(function (kpi) {
      var card = document.createElement("section");
      card.className = "kpi";
      var title = document.createElement("h2");
      title.textContent = kpi.title;
      card.appendChild(title);
      var summary = document.createElement("div");
      summary.className = "summary";
      var total = report.totals && report.totals[kpi.id];
      var sign = kpi.direction === "atMost" ? "≤ " : "≥ ";
      summary.appendChild(document.createTextNode("Target " + sign + format(kpi, kpi.target) + " · whole range: "));
      var figure = document.createElement("span");
      if (total && total.value !== null && total.value !== undefined) {
        figure.textContent = format(kpi, total.value) + " (" + total.numerator + "/" + total.denominator + ")";
        figure.className = meets(kpi, total.value) ? "met" : "missed";
      } else {
        figure.textContent = "no data";
      }
      summary.appendChild(figure);
      card.appendChild(summary);
      var plot = document.createElement("div");
      plot.className = "plot";
      var canvas = document.createElement("canvas");
      canvas.setAttribute("data-kpi", kpi.id);
      canvas.setAttribute("aria-label", kpi.title);
      plot.appendChild(canvas);
      card.appendChild(plot);
      $("charts").appendChild(card);

      var values = report.days.map(function (day) {
        var cell = day.values && day.values[kpi.id];
        return cell ? plotted(kpi, cell.value) : null;
      });
      var target = plotted(kpi, kpi.target);
      charts[kpi.id] = new window.Chart(canvas, {
        type: "line",
        data: {
          labels: labels,
          datasets: [
            { label: kpi.title, data: values, borderColor: "#2b6cb0", backgroundColor: "#2b6cb0", pointRadius: 3, spanGaps: false, tension: 0.2 },
            { label: "Target " + sign + format(kpi, kpi.target), data: labels.map(function () { return target; }),
              borderColor: "#c0392b", borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0, pointHitRadius: 0, fill: false }
          ]
        },
        options: {
          animation: false, responsive: true, maintainAspectRatio: false,
          interaction: { mode: "index", intersect: false },
          scales: {
            y: { beginAtZero: true, suggestedMax: isRatio(kpi) ? 100 : undefined,
                 ticks: { callback: function (v) { return isRatio(kpi) ? v + " %" : v; } },
                 title: { display: true, text: isRatio(kpi) ? "%" : kpi.unit } }
          },
          plugins: {
            legend: { position: "bottom" },
            tooltip: { callbacks: { label: function (item) {
              if (item.datasetIndex === 1) { return item.dataset.label; }
              var cell = report.days[item.dataIndex].values[kpi.id];
              return format(kpi, cell.value) + " (" + cell.numerator + "/" + cell.denominator + ")";
            } } }
          }
        }
      });
    });
    renderCohorts(report);
  }

  function renderCohorts(report) {
    if (!report.cohortWeeks || report.cohortWeeks.length === 0) { return; }
    var table = document.createElement("table");
    var caption = document.createElement("caption");
    caption.textContent = "Signup cohorts by week";
    table.appendChild(caption);
    var head = table.insertRow();
    ["Week", "Users"].concat(report.kpis.map(function (kpi) { return kpi.title; })).forEach(function (text) {
      var th = document.createElement("th");
      th.textContent = text;
      head.appendChild(th);
    });
    report.cohortWeeks.forEach(function (week) {
      var row = table.insertRow();
      row.insertCell().textContent = week.week;
      row.insertCell().textContent = String(week.users);
      report.kpis.forEach(function (kpi) {
        var cell = week.values && week.values[kpi.id];
        row.insertCell().textContent = cell ? format(kpi, cell.value) : "–";
      });
    });
    $("cohorts").appendChild(table);
  }

  async function downloadCSV() {
    var query = range();
    if (!query) { return; }
    $("download").disabled = true;
    try {
      var response = await authorizedGet("/v1/admin/kpis.csv?" + query);
      if (response.status === 404) { fail(notAdminText()); return; }
      if (!response.ok) { fail("The CSV could not be downloaded: " + await problemText(response)); return; }
      var blob = await response.blob();
      var link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = "surge-kpis-" + $("from").value + "-to-" + $("to").value + ".csv";
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
    } catch (e) {
      fail("The CSV could not be downloaded: " + e.message);
    } finally {
      $("download").disabled = false;
    }
  }

  function start() {
    var today = new Date();
    var first = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 27);
    $("to").value = localDay(today);
    $("from").value = localDay(first);
    $("sign-in").addEventListener("submit", signIn);
    $("range").addEventListener("submit", load);
    $("download").addEventListener("click", downloadCSV);
    $("sign-out").addEventListener("click", signOut);
    if (session()) { showSignedIn(true); load(); } else { showSignedIn(false); }
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
"""#
}
