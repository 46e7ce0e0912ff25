#!/usr/bin/env python3
"""A figure for the docs: chosen charts of a sweep's report, as a PNG screenshot by headless Chromium.

    scripts/report_figure.py SWEEP_DIR OUT.png --charts val_loss,loss [--group NAME] [--band ci|minmax]
                             [--width 1400] [--height 480] [--altgrad build/altgrad]

--charts takes the charts' data-chart names, as the report's DOM gives them: training curves
(loss, val_loss, grad_norm, lr, ...) and per-group diagnostics (quant/*/zero_out_pct,
diag/grad_snr_db/*, ...), which show the group --group selects (default: the report's first).
Everything else on the page is hidden, so the figure is those charts, drawn by the report itself.
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--virtual-time-budget=10000"]


def injected(charts, group, band):
    """CSS that leaves only the chosen charts (in their grid) and a script that picks group and band."""
    shown = ", ".join(f'#{box} > .chart[data-chart="{c}"]' for c in charts for box in ("curves", "diagnostics"))
    style = f"""<style>
body > *:not(#curves):not(#diagnostics) {{ display: none !important; }}
#curves > *, #diagnostics > * {{ display: none !important; }}
{shown} {{ display: block !important; }}
</style>"""
    picks = []
    if group:
        picks.append(f"pick('group', {group!r});")
    if band:
        picks.append(f"pick('band', {band!r});")
    script = """<script>
function pick(id, value) {
  const select = document.getElementById(id);
  if (!select) return;
  if (![...select.options].some((o) => o.value === value)) {
    document.documentElement.dataset.figureError = 'no ' + id + ' ' + value;
    return;
  }
  select.value = value;
  select.dispatchEvent(new Event('change'));
}
// A figure cannot scroll: every legend is laid out in full, on as many rows as its names need, and
// the plot's bottom margin grows by the rows it added (one row fits in the report's own margin).
function unpagedLegends() {
  document.querySelectorAll('.chart').forEach((box) => {
    const chart = echarts.getInstanceByDom(box);
    if (!chart) return;
    chart.setOption({legend: {type: 'plain'}});
    const legend = chart.getModel().getComponent('legend');
    const height = legend ? chart.getViewOfComponentModel(legend).group.getBoundingRect().height : 0;
    const bottom = chart.getOption().grid[0].bottom;
    chart.setOption({grid: {bottom: bottom + Math.max(0, height - 24)}});
  });
}
window.addEventListener('load', () => setTimeout(() => { %s setTimeout(unpagedLegends, 0); }, 0));
</script>""" % " ".join(picks)
    return style + script


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep")
    parser.add_argument("out")
    parser.add_argument("--charts", required=True)
    parser.add_argument("--group")
    parser.add_argument("--band", choices=["ci", "minmax"])
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--altgrad", default=os.environ.get("ALTGRAD", str(ROOT / "build" / "altgrad")))
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if not chromium:
        sys.exit("report_figure: chromium not found (scripts/setup_browser.sh installs it)")
    with tempfile.TemporaryDirectory() as work:
        page = pathlib.Path(work) / "report.html"
        subprocess.run([args.altgrad, "report", args.sweep, "-o", str(page)], check=True, stdout=subprocess.DEVNULL)
        html = page.read_text()
        page.write_text(html.replace("</head>", injected(args.charts.split(","), args.group, args.band) + "</head>", 1))
        dom = subprocess.run([chromium, *FLAGS, f"--user-data-dir={work}/dom", "--dump-dom", page.as_uri()],
                             capture_output=True, text=True, timeout=120, check=True).stdout
        if 'data-figure-error="' in dom:
            sys.exit("report_figure: the report has " + dom.split('data-figure-error="')[1].split('"')[0])
        missing = [c for c in args.charts.split(",") if f'class="chart" data-chart="{c}"' not in dom]
        if missing:
            sys.exit(f"report_figure: the report of {args.sweep} draws no chart {', '.join(missing)}")
        subprocess.run([chromium, *FLAGS, f"--user-data-dir={work}/shot", f"--window-size={args.width},{args.height}",
                        f"--screenshot={pathlib.Path(args.out).resolve()}", page.as_uri()],
                       capture_output=True, timeout=120, check=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
