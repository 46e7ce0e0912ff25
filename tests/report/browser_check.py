#!/usr/bin/env python3
"""Opens the report of tests/report/fixture in headless Chromium with no network and checks it.

Renders the report with `altgrad report`, loads it with --dump-dom (after its scripts ran), and
asserts: no console error and no error shown by the page; no request to the network by the page;
the page finished drawing; one chart per
top-level metric with one line per group that logged it; the diagnostics of the default group with
one line per quantization point or tensor of that group's metrics; one parallel-coordinates line
set per group; a forest plot with a row per group the criteria compare; one table row per group,
per verdict, and per warning and stop in events.jsonl. The expected counts are recomputed here from
the runs' files. A second sweep, written here with four seeds, checks what the fixture's one-seed
groups cannot: the forest plot's gaps, intervals and colours against the page's group and verdict
tables, and start-up events listed apart from the warnings.

Chromium logs a page's console.error at level INFO, like any console message, and logs nothing
when a request fails offline; so console errors are recorded by a hook the checked copy of the
page gets first in its <head> (console.error, uncaught errors and rejections, into an attribute
of <html>), and requests are read from Chromium's net log (every URL request the page started,
as opposed to Chromium's own). Both checks are proven on every run: a planted copy of the page
that calls console.error and loads an image from an unroutable address must fail them. With --screenshot PATH it also saves a screenshot.
Exit 77 (skipped) when chromium is not installed (scripts/setup_browser.sh installs it).
usage: browser_check.py ALTGRAD [--screenshot PATH] [--dir DIR]
"""
import argparse
import html.parser
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from sweep_files import write_sweep

ROOT = pathlib.Path(__file__).resolve().parents[2]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


# First in <head>: every console.error, uncaught error and unhandled rejection, as JSON on <html>.
CONSOLE_HOOK = """<script>(() => {
  const errors = [];
  const record = (text) => { errors.push(text); document.documentElement.dataset.consoleErrors = JSON.stringify(errors); };
  const original = console.error;
  console.error = (...args) => { record(args.map(String).join(' ')); original.apply(console, args); };
  window.addEventListener('error', (e) => record('uncaught: ' + e.message));
  window.addEventListener('unhandledrejection', (e) => record('unhandled rejection: ' + e.reason));
})();</script>"""
# The faults the checks must catch: 198.51.100.0/24 is TEST-NET-2, never routed.
PLANTED = """<script>console.error('planted console error');
new Image().src = 'http://198.51.100.7/planted.png';</script>"""


class Dom(html.parser.HTMLParser):
    """Collects the chart elements, the body's attributes, table rows and cells, and the error box."""

    def __init__(self):
        super().__init__()
        self.charts, self.body, self.rows, self.errors = {}, {}, {}, None
        self.cells = {}  # table id: its rows, each a list of cell texts
        self.console_errors = []
        self.curves_band = None
        self.diagnostics_group = None
        self.table = None
        self.cell = None
        self.in_errors = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.console_errors = json.loads(a.get("data-console-errors") or "[]")
        if "data-chart" in a:
            self.charts[a["data-chart"]] = int(a.get("data-lines", "-1"))
        if a.get("id") == "curves":
            self.curves_band = a.get("data-band")
        if a.get("id") == "diagnostics":
            self.diagnostics_group = a.get("data-group")
        if tag == "body":
            self.body = a
        if tag == "table":
            self.table = a.get("id")
            self.rows[self.table] = 0
            self.cells[self.table] = []
        if tag == "tr" and self.table:
            self.rows[self.table] += 1
            self.cells[self.table].append([])
        if tag in ("td", "th") and self.table:
            self.cell = ""
        if tag == "pre" and a.get("id") == "errors":
            self.errors = "hidden" if "hidden" in a else ""
            self.in_errors = True

    def handle_data(self, data):
        if self.in_errors and data.strip():
            self.errors += data
        if self.cell is not None:
            self.cell += data

    def handle_endtag(self, tag):
        if tag == "pre":
            self.in_errors = False
        if tag in ("td", "th") and self.cell is not None:
            self.cells[self.table][-1].append(self.cell)
            self.cell = None
        if tag == "table":
            self.table = None

    def table_by(self, table, key):
        """{row[key]: {header: cell}} of a table, after its header row."""
        rows = self.cells.get(table, [])
        return {row[rows[0].index(key)]: dict(zip(rows[0], row)) for row in rows[1:]} if rows else {}


def lines_of(path):
    return [json.loads(l) for l in open(path) if l.strip()] if path.exists() else []


def numeric_keys(obj, prefix=""):
    """Every numeric leaf of a metrics line as its '/' path (histogram counts/lo/hi excluded)."""
    keys = set()
    if isinstance(obj, dict):
        histogram = "counts" in obj and "lo" in obj and "hi" in obj
        for k, v in obj.items():
            if histogram and k in ("counts", "lo", "hi"):
                continue
            keys |= numeric_keys(v, f"{prefix}/{k}" if prefix else k)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            keys |= numeric_keys(v, f"{prefix}/{i}")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        keys.add(prefix)
    return keys


def expected_counts(sweep):
    index = json.load(open(sweep / "index.json"))
    keys_by_group, events = {}, 0
    for run in index["runs"]:
        keys = keys_by_group.setdefault(run["group"], set())
        for line in lines_of(sweep / run["dir"] / "metrics.jsonl"):
            line.pop("step")
            keys |= numeric_keys(line)
        events += sum(e["event"] in ("warning", "stop") for e in lines_of(sweep / run["dir"] / "events.jsonl"))
    groups = [g for g in dict.fromkeys(r["group"] for r in index["runs"])]
    return index, groups, keys_by_group, events


CLICK = """<script>
const links = document.querySelectorAll('#event-table a');
if (links.length) links[links.length - 1].click();
document.body.dataset.clicked = document.getElementById('diagnostics').dataset.group + '|' +
    document.querySelectorAll('#diagnostics .chart').length + '|' + document.getElementById('errors').hidden;
const band = document.getElementById('band');
band.value = 'ci';
band.dispatchEvent(new Event('change'));
document.body.dataset.band = document.getElementById('curves').dataset.band + '|' +
    document.querySelectorAll('#curves .chart').length + '|' + document.getElementById('errors').hidden;
</script>"""


def click_last_event(chromium, page, work):
    """Clicks the last row of the warnings table (a stop, in the fixture), then switches the curves'
    band to the 95% interval, in a copy of the page; returns (group shown, charts drawn, error box
    still hidden) and (band the curves say they draw, curve charts, error box still hidden)."""
    text = page.read_text()
    cut = text.rfind("</body>")
    copy = page.with_name("clicked.html")
    copy.write_text(text[:cut] + CLICK + text[cut:])
    run = subprocess.run([chromium, *FLAGS, f"--user-data-dir={work}/profile3", "--dump-dom", copy.as_uri()],
                         capture_output=True, text=True, timeout=60)
    dom = Dom()
    dom.feed(run.stdout)
    group, charts, hidden = (dom.body.get("data-clicked") or "||").split("|")
    band, curves, still_hidden = (dom.body.get("data-band") or "||").split("|")
    return (group, int(charts or 0), hidden == "true"), (band, int(curves or 0), still_hidden == "true")


def page_requests(net_log):
    """URLs the page itself requested: URL_REQUEST_START_JOB events with the page's origin as
    initiator ("null" for a file: page), other than file: and data: URLs. Chromium's own requests
    (update checks and the like) have no origin and are not the page's."""
    log = json.loads(pathlib.Path(net_log).read_text())
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params", {})
        url = params.get("url", "")
        if event["type"] == start_job and params.get("initiator") != "not an origin" and url \
                and not url.startswith(("file:", "data:")):
            urls.append(url)
    return urls


def load(chromium, page, work, name, head="", tail=""):
    """Loads a copy of the page with the console hook (and `head`) first in <head>, and `tail` last
    in <body>; returns its DOM after the scripts ran and the URLs it requested."""
    text = page.read_text()
    at = text.index("<head>") + len("<head>")
    end = text.rfind("</body>")
    copy = page.with_name(f"{name}.html")
    copy.write_text(text[:at] + CONSOLE_HOOK + head + text[at:end] + tail + text[end:])
    net_log = pathlib.Path(work) / f"{name}.netlog.json"
    run = subprocess.run([chromium, *FLAGS, f"--user-data-dir={work}/profile-{name}", f"--log-net-log={net_log}",
                          "--dump-dom", copy.as_uri()], capture_output=True, text=True, timeout=60)
    dom = Dom()
    dom.feed(run.stdout)
    return dom, page_requests(net_log)


# Last in <body>: what the forest plot's ECharts instance holds (not what the page meant to draw):
# row labels, each marker's row, series (its verdict), colour and gap, each error bar's and each
# corrected interval's ends, and the vertical lines.
FOREST_DUMP = """<script>(() => {
  const box = document.querySelector('[data-chart="forest"]');
  const option = echarts.getInstanceByDom(box).getOption();
  const points = [], bars = [], bands = [], lines = [];
  option.series.forEach((s) => {
    s.data.forEach((d) => {
      if (s.type === 'scatter') points.push({row: d.row, verdict: s.name, color: s.color, gap: d.value[0]});
      if (s.type === 'custom') {
        (s.name === 'corrected interval' ? bands : bars).push({row: d.row, low: d.value[0], high: d.value[1]});
      }
    });
    ((s.markLine || {}).data || []).forEach((l) => lines.push(l.xAxis));
  });
  document.body.dataset.forest = JSON.stringify({labels: option.yAxis[0].data, points: points, bars: bars, bands: bands,
                                                 lines: lines});
})();</script>"""


def compared(index):
    """The forest plot's rows: (group, baseline) for each criterion's baseline and every other group."""
    groups = list(dict.fromkeys(r["group"] for r in index["runs"]))
    baselines = list(dict.fromkeys(c["baseline"] for c in index.get("criteria", [])))
    return [(g, b) for g in groups for b in baselines if g != b]


# A sweep whose forest plot has every verdict and every interval (sweep_files.py writes it): four
# seeds against bf16, judged within 1% and within 2%. close.seed1 logs two start-up events before
# its one warning.
FOREST_GROUPS = {
    "bf16": ("bf16", {1: 2.000, 2: 2.030, 3: 1.990, 4: 2.010}),
    "close": ("fp8-hybrid", {1: 2.020, 2: 2.055, 3: 2.012, 4: 2.031}),   # pass within 2% only
    "noisy": ("fp8-hybrid", {1: 2.040, 2: 2.030, 3: 2.030, 4: 2.010}),   # inconclusive on both
    "far": ("fp8-hybrid", {1: 2.200, 2: 2.250, 3: 2.190, 4: 2.210}),     # fail on both
}
FOREST_CRITERIA = [{"baseline": "bf16", "max_gap_pct": 1.0, "min_seeds": 3, "min_steps": 0},
                   {"baseline": "bf16", "max_gap_pct": 2.0, "min_seeds": 3, "min_steps": 0}]
START_UP = [{"event": "start_up", "step": 1, "kind": "no_history", "where": p, "statistic": "underflow",
             "value": 92.5, "message": p + " flushes 92.5% at delayed scaling's first step"}
            for p in ("h.0.attn.c_attn:grad", "h.1.attn.c_attn:grad")]
FOREST_EVENTS = {"close.seed1": START_UP + [{"event": "warning", "step": 12, "kind": "overflow",
                                             "where": "h.0.mlp.c_fc:act", "value": 1.5, "threshold": 1.0,
                                             "message": "h.0.mlp.c_fc:act overflows 1.5% of its values"}]}


def check_forest(chromium, altgrad, work):
    """Renders FOREST_GROUPS' report and checks its forest plot against the page's own tables: a row
    per compared group, each marker's gap and error bar's ends equal to the group table's paired
    cells, its colour the verdict table's verdict on the loosest criterion, a line at 0 and at each
    threshold; start-up events apart from the warnings. Returns the failures."""
    root = pathlib.Path(work) / "forest-sweep"
    write_sweep(str(root), FOREST_GROUPS, FOREST_CRITERIA, FOREST_EVENTS)
    page = pathlib.Path(work) / "forest.html"
    subprocess.run([altgrad, "report", str(root), "-o", str(page)], check=True, stdout=subprocess.DEVNULL)
    dom, requests = load(chromium, page, work, "forest-checked", tail=FOREST_DUMP)
    failures = [f"forest page: {e}" for e in dom.console_errors + requests]
    forest = json.loads(dom.body.get("data-forest") or "{}")
    groups = [g for g in FOREST_GROUPS if g != "bf16"]
    if forest.get("labels") != groups:
        return failures + [f"forest plot rows {forest.get('labels')}, expected {groups}"]
    table = dom.table_by("group-table", "group")
    loosest = "within 2% of bf16"
    verdicts = {row[1]: row[2] for row in dom.cells.get("verdict-table", [])[1:] if row[0].startswith(loosest)}
    points = {p["row"]: p for p in forest["points"]}
    bars = {b["row"]: b for b in forest["bars"]}
    for row, group in enumerate(groups):
        cells = table.get(group, {})
        got = (points.get(row, {}).get("gap"), bars.get(row, {}).get("low"), bars.get(row, {}).get("high"))
        want = tuple(float(cells.get(c, "nan")) for c in ("paired gap %", "paired low %", "paired high %"))
        if got != want:
            failures.append(f"forest row {group}: gap and interval {got}, the group table says {want}")
        if points.get(row, {}).get("verdict") != verdicts.get(group):
            failures.append(f"forest row {group}: colour {points.get(row, {}).get('verdict')}, "
                            f"verdict {loosest}: {verdicts.get(group)}")
        # Holm's level is at most 5%: the interval the verdict was decided on holds the 95% one.
        band = {b["row"]: b for b in forest["bands"]}.get(row)
        if band is None or not band["low"] <= want[1] <= want[2] <= band["high"]:
            failures.append(f"forest row {group}: corrected interval {band} does not hold the 95% one {want[1:]}")
    if {p["verdict"] for p in forest["points"]} != {"pass", "fail", "inconclusive"} or \
            len({str(p["color"]) for p in forest["points"]}) != 3:
        failures.append(f"the forest plot should show three verdicts in three colours: {forest['points']}")
    if sorted(forest["lines"]) != [0, 1, 2]:
        failures.append(f"forest plot lines at {forest['lines']}, expected 0 and the thresholds 1 and 2")
    if dom.rows.get("start-up-table") != len(START_UP) + 1:
        failures.append(f"start-up table: {dom.rows.get('start-up-table')} rows for {len(START_UP)} events")
    early = dom.table_by("run-table", "run").get("close.seed1", {}).get("early warning")
    if early != "step 12: overflow at h.0.mlp.c_fc:act":
        failures.append(f"close.seed1's early warning is {early!r}, not its first warning after the start-up events")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("altgrad")
    parser.add_argument("--screenshot")
    parser.add_argument("--dir", default=str(ROOT / "tests" / "report" / "fixture"))
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if not chromium:
        print("chromium is not installed (bash scripts/setup_browser.sh): skipped")
        return 77
    sweep = pathlib.Path(args.dir)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        page = pathlib.Path(work) / "report.html"
        subprocess.run([args.altgrad, "report", os.path.relpath(sweep), "-o", str(page)], check=True, stdout=subprocess.DEVNULL)
        dom, requests = load(chromium, page, work, "checked")
        if dom.console_errors or requests:
            failures.append("console errors or network requests:\n  " + "\n  ".join(dom.console_errors + requests))
        planted, planted_requests = load(chromium, page, work, "planted", PLANTED)
        if "planted console error" not in planted.console_errors:
            failures.append(f"the console check is blind: the planted console.error gave {planted.console_errors}")
        if "http://198.51.100.7/planted.png" not in planted_requests:
            failures.append(f"the network check is blind: the planted request gave {planted_requests}")
        clicked, ci_band = click_last_event(chromium, page, work)
        failures += check_forest(chromium, args.altgrad, work)
        if args.screenshot:
            subprocess.run([chromium, *FLAGS, f"--user-data-dir={work}/profile2", "--window-size=1400,4600",
                            f"--screenshot={pathlib.Path(args.screenshot).resolve()}", page.as_uri()],
                           capture_output=True, timeout=60, check=True)

    index, groups, keys_by_group, events = expected_counts(sweep)
    if dom.body.get("data-rendered") != "yes":
        failures.append("the page did not finish drawing (body has no data-rendered=yes)")
    if dom.errors not in ("hidden", None):
        failures.append("the page shows errors: " + dom.errors)

    def expect(chart, lines):
        got = dom.charts.get(chart)
        if got != lines:
            failures.append(f"chart {chart}: expected {lines} lines, found {got}")

    top_level = set().union(*keys_by_group.values())
    curves = sorted(k for k in top_level if "/" not in k)
    for key in curves:
        expect(key, sum(key in keys for keys in keys_by_group.values()))
    if dom.curves_band != "min–max":
        failures.append(f"the curves say they draw the band {dom.curves_band!r}, expected min–max by default")
    if ci_band != ("95% CI of the mean", len(curves), True):
        failures.append(f"switching the band to the 95% CI gave {ci_band}, expected the CI band on {len(curves)} charts")
    # The diagnostics of the group the page shows first (a quantized one): quant charts have one
    # line per quantization point, kurtosis one per block and matmul input.
    if dom.diagnostics_group not in keys_by_group or not any(k.startswith("quant/") for k in keys_by_group[dom.diagnostics_group]):
        failures.append(f"diagnostics drawn for {dom.diagnostics_group!r}, not a quantized group")
        keys = set()
    else:
        keys = keys_by_group[dom.diagnostics_group]
    points = {k.split("/")[1] for k in keys if k.startswith("quant/") and k.endswith("/overflow_pct")}
    expect("quant/*/overflow_pct", len(points))
    expect("quant/*/amax", len(points))
    expect("diag/kurtosis/*", len({k for k in keys if k.startswith("diag/kurtosis/")}))
    expect("diag/grad_snr_db/*", len({k for k in keys if k.startswith("diag/grad_snr_db/")}))
    expect("finals", len(groups))
    expect("forest", len(compared(index)))
    expect("weight_log2", 1)
    if dom.rows.get("group-table") != len(groups) + 1:
        failures.append(f"group table: {dom.rows.get('group-table')} rows for {len(groups)} groups")
    verdicts = len(index.get("criteria", [])) * (len(groups) - 1)
    if dom.rows.get("verdict-table") != (verdicts + 1 if verdicts else None):
        failures.append(f"verdict table: {dom.rows.get('verdict-table')} rows for {verdicts} verdicts")
    if dom.rows.get("run-table") != len(index["runs"]) + 1:
        failures.append(f"run table: {dom.rows.get('run-table')} rows for {len(index['runs'])} runs")
    if dom.rows.get("event-table") != (events + 1 if events else None):
        failures.append(f"event table: {dom.rows.get('event-table')} rows for {events} warnings and stops")
    last_event_group = None
    for run in index["runs"]:
        for e in lines_of(sweep / run["dir"] / "events.jsonl"):
            if e["event"] in ("warning", "stop"):
                last_event_group = run["group"]
    if events and (clicked[0] != last_event_group or clicked[1] == 0 or not clicked[2]):
        failures.append(f"clicking the last event showed {clicked}, expected group {last_event_group}, charts, no error")
    if index.get("searches") and dom.rows.get("search-table") != len(index["searches"]) + 1:
        failures.append("search table: wrong row count")
    if args.screenshot:
        png = pathlib.Path(args.screenshot).read_bytes()
        # PNG signature, then IHDR: width and height, big-endian, at bytes 16..24.
        size = (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) if len(png) > 24 else None
        if not png.startswith(b"\x89PNG\r\n\x1a\n") or size != (1400, 4600):
            failures.append(f"the screenshot is not a 1400x4600 PNG (size {size})")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(dom.charts)} charts checked against {sweep}: {'failed' if failures else 'ok'} "
          f"(page drawn {dom.body.get('data-render-ms')} ms after navigation started)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
