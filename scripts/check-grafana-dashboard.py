#!/usr/bin/env python3
"""Checks the provisioned Grafana dashboard against the code, so the dashboard cannot drift from what services export.

    scripts/check-grafana-dashboard.py [--promtool promtool]

Run by `make validate-deploy` (scripts/validate-deploy.sh). It fails, naming the panel, when:
- a PromQL `expr` (each panel's `targets[].expr`) uses a metric the code does not emit: the names are read from the
  swift-metrics calls in Services/ and Shared/ (`Counter(label:`, `Gauge(label:`, `Timer(label:`, ...; the HTTP ones
  are Shared/Runtime/RequestMetricsMiddleware.swift's), renamed as Shared/Runtime/Observability.swift does (`.`
  becomes `_`), with the histogram series swift-prometheus renders for a Timer (`_bucket`, `_sum`, `_count`);
- a label matcher or a `by`/`on`/... clause names a label that neither those metrics (their dimensions, `le` for
  buckets) nor Prometheus' target labels (`service`, `instance`, `job`) carry;
- an expression uses a Grafana template variable (`$...`), or a panel's datasource is not the provisioned one;
- `promtool check rules` refuses an expression (when promtool is available);
- deploy/observability/prometheus.yml does not scrape exactly docker-compose.yml's Surge services on their ports, or
  does not give every target its `service` label.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASHBOARD = "deploy/observability/grafana/dashboards/surge.json"
DATASOURCES = "deploy/observability/grafana/provisioning/datasources/prometheus.yml"
PROMETHEUS = "deploy/observability/prometheus.yml"
COMPOSE = "docker-compose.yml"

# Series Prometheus makes for every target itself.
SCRAPE_SERIES = ["up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_samples_post_metric_relabeling", "scrape_series_added"]
TARGET_LABELS = {"service", "instance", "job"}

METRIC_CALL = re.compile(r"\b(Counter|FloatingPointCounter|Gauge|Meter|Recorder|Timer)\(\s*label:\s*\"([^\"]+)\"")
DIMENSION = re.compile(r"\(\s*\"([^\"]+)\"\s*,")


def prometheus_name(name):
    """Shared/Runtime/Observability.swift's prometheusName: anything but letters, digits, `_` and `:` becomes `_`."""
    return re.sub(r"[^a-zA-Z0-9_:]", "_", name)


def call_text(source, start):
    """The text of the call whose `(` is the first one at or after `start`, up to its matching `)`."""
    depth, i, in_string = 0, source.index("(", start), False
    begin = i
    while i < len(source):
        c = source[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return source[begin : i + 1]
        i += 1
    return source[begin:]


def metric_calls(source):
    """(kind, label, dimension names, histogram?) for every swift-metrics constructor call in a Swift source."""
    for match in METRIC_CALL.finditer(source):
        kind, label = match.group(1), match.group(2)
        text = call_text(source, match.start())
        dimensions = DIMENSION.findall(text)
        # A Recorder aggregates (a histogram) unless told otherwise; a Gauge is a Recorder that does not.
        histogram = kind == "Timer" or (kind == "Recorder" and "aggregate: false" not in text)
        yield kind, label, dimensions, histogram


def exported_series(errors):
    """Every series name the services export, mapped to its label names, and where each comes from."""
    series, origin = {}, {}

    def add(kind, label, dimensions, histogram, where):
        name = prometheus_name(label)
        labels = {prometheus_name(d) for d in dimensions}
        names = [name + "_bucket", name + "_sum", name + "_count"] if histogram else [name]
        for n in names:
            series.setdefault(n, set()).update(labels | ({"le"} if n.endswith("_bucket") and histogram else set()))
            origin.setdefault(n, where)

    for folder in ("Services", "Shared"):
        for directory, _, files in os.walk(os.path.join(ROOT, folder)):
            if os.sep + "Template" + os.sep in directory + os.sep:
                continue  # never deployed
            for file in files:
                if file.endswith(".swift"):
                    path = os.path.join(directory, file)
                    with open(path, encoding="utf-8") as handle:
                        for kind, label, dimensions, histogram in metric_calls(handle.read()):
                            add(kind, label, dimensions, histogram, os.path.relpath(path, ROOT))

    for name in SCRAPE_SERIES:
        series.setdefault(name, set())
        origin.setdefault(name, "Prometheus (every scrape)")
    return series, origin


# --- PromQL, just enough to find metric names and label names -------------------------------------------------------

TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
      | (?P<number>(?:0x[0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)(?:ms|[smhdwy])?(?:[0-9]+(?:ms|[smhdwy]))*)
      | (?P<identifier>[a-zA-Z_:][a-zA-Z0-9_:]*)
      | (?P<operator>=~|!~|!=|==|<=|>=|[-+*/%^<>=,(){}\[\]@])
    )""",
    re.VERBOSE,
)
AGGREGATIONS = {"sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk", "quantile", "count_values", "group", "limitk", "limit_ratio"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
KEYWORDS = {"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"}


def tokens(expr):
    position, result = 0, []
    expr = expr.rstrip()
    while position < len(expr):
        match = TOKEN.match(expr, position)
        if not match or match.end() == position:
            raise ValueError(f"cannot read the expression at {expr[position:position + 20]!r}")
        kind = match.lastgroup
        result.append((kind, match.group(kind)))
        position = match.end()
    return result


def analyse(expr):
    """(selectors: [(metric, [label names matched])], grouping label names) of a PromQL expression."""
    items = tokens(expr)
    selectors, grouping = [], set()
    i = 0
    while i < len(items):
        kind, value = items[i]
        following = items[i + 1][1] if i + 1 < len(items) else None
        if kind == "identifier" and value in GROUPING:
            i += 1
            if i < len(items) and items[i][1] == "(":
                i += 1
                while items[i][1] != ")":
                    if items[i][0] == "identifier":
                        grouping.add(items[i][1])
                    i += 1
            i += 1
            continue
        if kind == "identifier" and value == "offset":
            i += 2
            continue
        if kind == "identifier" and (following == "(" or value in KEYWORDS or value in AGGREGATIONS):
            i += 1  # a function, an aggregation (`sum by (x) (...)`) or a keyword
            continue
        if value == "[":
            while items[i][1] != "]":
                i += 1
            i += 1
            continue
        if kind == "identifier" or value == "{":
            metric = value if kind == "identifier" else None
            labels = []
            if kind == "identifier":
                i += 1
            if i < len(items) and items[i][1] == "{":
                i += 1
                while items[i][1] != "}":
                    label_kind, label = items[i]
                    if label_kind == "identifier" and i + 1 < len(items) and items[i + 1][1] in ("=", "!=", "=~", "!~"):
                        if label == "__name__" and items[i + 2][0] == "string" and items[i + 1][1] == "=":
                            metric = items[i + 2][1][1:-1]
                        else:
                            labels.append(label)
                    i += 1
                i += 1
            selectors.append((metric, labels))
            continue
        i += 1
    return selectors, grouping


# --- the files -------------------------------------------------------------------------------------------------------

def panels_of(items):
    for panel in items:
        yield panel
        yield from panels_of(panel.get("panels", []))


def check_prometheus_config(errors):
    with open(os.path.join(ROOT, PROMETHEUS), encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    with open(os.path.join(ROOT, COMPOSE), encoding="utf-8") as handle:
        compose = yaml.safe_load(handle)
    expected = {}
    for name, service in compose.get("services", {}).items():
        command = service.get("command") or []
        environment = service.get("environment") or {}
        if command and re.fullmatch(r"surge-[a-z]+", str(command[0])) and "HTTP_PORT" in environment:
            expected[name] = int(environment["HTTP_PORT"])
    scraped, labelled = {}, []
    for job in config.get("scrape_configs", []):
        for sd in job.get("dns_sd_configs", []):
            for name in sd.get("names", []):
                scraped[name] = sd.get("port")
        labelled.append(any(r.get("target_label") == "service" and r.get("source_labels") == ["__meta_dns_name"]
                            for r in job.get("relabel_configs", [])))
    if scraped != expected:
        errors.append(f"{PROMETHEUS}: dns_sd_configs scrape {sorted(scraped.items())}, docker-compose.yml runs {sorted(expected.items())}")
    if not labelled or not all(labelled):
        errors.append(f"{PROMETHEUS}: every scrape job must relabel __meta_dns_name to `service` (the dashboard groups by it)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--promtool", default=shutil.which("promtool"), help="promtool, to check each expression's syntax")
    arguments = parser.parse_args()

    errors = []
    series, origin = exported_series(errors)
    with open(os.path.join(ROOT, DATASOURCES), encoding="utf-8") as handle:
        uids = {source.get("uid") for source in yaml.safe_load(handle).get("datasources", [])}
    with open(os.path.join(ROOT, DASHBOARD), encoding="utf-8") as handle:
        dashboard = json.load(handle)

    expressions, used = [], {}
    for panel in panels_of(dashboard.get("panels", [])):
        title = panel.get("title", f"panel {panel.get('id')}")
        targets = panel.get("targets", [])
        if panel.get("type") != "row" and not targets:
            errors.append(f"{DASHBOARD}: panel {title!r} has no targets")
        for source in [panel.get("datasource")] + [t.get("datasource") for t in targets]:
            if source is not None and source.get("uid") not in uids:
                errors.append(f"{DASHBOARD}: panel {title!r} uses datasource {source.get('uid')!r}, not the provisioned {sorted(uids)}")
        for target in targets:
            expr = target.get("expr")
            if not expr:
                errors.append(f"{DASHBOARD}: panel {title!r}, target {target.get('refId')}: no expr")
                continue
            expressions.append((title, expr))
            if "$" in expr:
                errors.append(f"{DASHBOARD}: panel {title!r}: template variables are not allowed in exprs (use fixed ranges): {expr}")
                continue
            try:
                selectors, grouping = analyse(expr)
            except (ValueError, IndexError) as error:
                errors.append(f"{DASHBOARD}: panel {title!r}: {error}: {expr}")
                continue
            available = set(TARGET_LABELS)
            for metric, labels in selectors:
                if metric is None:
                    errors.append(f"{DASHBOARD}: panel {title!r}: a selector without a metric name: {expr}")
                    continue
                if metric not in series:
                    errors.append(f"{DASHBOARD}: panel {title!r}: metric {metric} is not emitted by the code: {expr}")
                    continue
                used.setdefault(metric, []).append(title)
                available |= series[metric]
                unknown = set(labels) - series[metric] - TARGET_LABELS
                if unknown:
                    errors.append(f"{DASHBOARD}: panel {title!r}: {metric} has no label {sorted(unknown)} (it has {sorted(series[metric])}): {expr}")
            unknown = grouping - available
            if unknown:
                errors.append(f"{DASHBOARD}: panel {title!r}: grouping by {sorted(unknown)}, which none of its metrics carries: {expr}")

    if arguments.promtool:
        with tempfile.TemporaryDirectory() as directory:
            rules = os.path.join(directory, "dashboard-rules.yml")
            with open(rules, "w", encoding="utf-8") as handle:
                yaml.safe_dump({"groups": [{"name": "dashboard", "rules": [
                    {"record": f"dashboard:expr_{i}", "expr": expr} for i, (_, expr) in enumerate(expressions)]}]}, handle)
            result = subprocess.run([arguments.promtool, "check", "rules", rules], capture_output=True, text=True)
            if result.returncode != 0:
                errors.append(f"{DASHBOARD}: promtool check rules refuses an expression:\n{result.stdout}{result.stderr}")
    else:
        print("check-grafana-dashboard: promtool not found, expressions' syntax not checked", file=sys.stderr)

    check_prometheus_config(errors)

    if errors:
        for error in errors:
            print(error, file=sys.stderr)
        return 1
    print(f"{len(expressions)} expressions in {DASHBOARD}, {len(used)} metrics, each emitted by the code:")
    for metric in sorted(used):
        print(f"  {metric:40} {origin[metric]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
