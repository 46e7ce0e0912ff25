#!/usr/bin/env python3
"""Prints the tables of docs/findings.md from the studies' finished sweeps (configs/studies/).

Usage: scripts/findings_tables.py STUDY SWEEP_DIR [ALTGRAD] [--check DOC] [--all]
  STUDY: e7m0_gradients | e1m6_placement | stochastic_power_of_two | e7m0_error_decomposition |
         precision_schedules | phase1_criterion | fp4_recipes | fp4_backward |
         hopper_accumulation | hopper_accumulation_wide |
         torchao_rowwise | long_training | lr_threshold | stiffness_rates | stiffness_e7m0

Reads each run's metrics.jsonl, the report's summary.csv and report.md (`altgrad report`) and, for
a threshold search, the sweep's index.json; for the decomposition it evaluates checkpoints with
ALTGRAD (default build/altgrad). Every number is a
mean over a group's seeds with its 95% Student t interval (half-width after ±); per-seed values
are taken first, so the interval is over seeds. Values "at step N" come from the metrics line of
step N (a diagnostic step). A study with criteria first gets its verdict table: each group's final
losses, its paired gap to the baseline and its verdicts, as the report decided them.

--check DOC: afterwards, every table row printed must be a line of DOC (docs/findings.md), digit
for digit; the rows it lacks are printed and the exit status is 1.
--all: every row of a table the page shortens (study 2's range fit ranks all points).
"""
import csv
import functools
import json
import math
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import tomllib

from seed_interval import bonferroni_half_width, half_width

ROOT = pathlib.Path(__file__).resolve().parents[1]


def mean_ci(values):
    """'mean ± half-width' of the 95% interval over seeds; the mean alone for one value."""
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return "–"
    m = statistics.fmean(values)
    if len(values) < 2:
        return f"{m:.4g}"
    return f"{m:.4g} ± {half_width(values):.2g}"


def runs(sweep):
    """{group: [run dir, ...]} in the sweep's order of groups and in seed order, from the report's
    summary.csv (written by `altgrad report`)."""
    with open(sweep / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    order = list(dict.fromkeys(r["group"] for r in rows))
    groups = {}
    for r in sorted(rows, key=lambda r: (order.index(r["group"]), int(r["seed"]))):
        groups.setdefault(r["group"], []).append(sweep / "runs" / r["run"])
    return groups


@functools.cache
def metrics(run):
    """The run's metrics lines, parsed once (none for a run that has not started)."""
    path = run / "metrics.jsonl"
    return [json.loads(line) for line in open(path)] if path.exists() else []


def line_at(run, step):
    """The run's metrics line of `step`; None where it has none (it stopped first)."""
    return next((m for m in metrics(run) if m["step"] == step), None)


def metrics_at(run, step):
    line = line_at(run, step)
    if line is None:
        raise SystemExit(f"findings_tables: {run} has no metrics line for step {step}")
    return line


def diagnostic_steps(run):
    """The steps whose metrics line holds the full diagnostics (every diag_interval, and the last)."""
    return [m["step"] for m in metrics(run) if "diag" in m]


def point_mean(m, suffix, key, every_copy=False):
    """Mean of quant.<point>.<key> over the points whose name ends with suffix (":grad", ":act");
    with every_copy, over the column-wise copies that block scaling makes as well
    (quant.<point>.colwise). For dY these are dgrad's operand and wgrad's."""
    values = [copy[key] for p, v in m.get("quant", {}).items() if p.endswith(suffix)
              for copy in ((v, v.get("colwise", {})) if every_copy else (v,)) if key in copy]
    return statistics.fmean(values) if values else None


def hadamard_mean(m, key):
    """Mean over the :grad points of quant.<point>.hadamard.wgrad[key]: what the transform did to
    dY's wgrad copy (none where no GEMM is transformed)."""
    values = [v["hadamard"]["wgrad"][key] for p, v in m.get("quant", {}).items()
              if p.endswith(":grad") and "wgrad" in v.get("hadamard", {})]
    return statistics.fmean(values) if values else None


def tensor_mean(m, section, key=None):
    """Mean over the matmul weight tensors of diag.<section>[tensor] (or its [key])."""
    table = m["diag"].get(section, {})
    values = [(v[key] if key else v) for t, v in table.items() if t.endswith(".weight") and "wte" not in t]
    values = [v for v in values if v is not None and v != "inf"]
    return statistics.fmean(values) if values else None


PRINTED_ROWS = []  # every table row printed, for --check
CHECK_FAILURES = []  # what else --check must fail on, in words


def row(cells):
    line = "| " + " | ".join(cells) + " |"
    PRINTED_ROWS.append(line)
    print(line)


def header(cells):
    row(cells)
    row(["---"] * len(cells))


@functools.cache
def events(run):
    """The run's events lines, parsed once (none for a run that has not started)."""
    path = run / "events.jsonl"
    return [json.loads(line) for line in open(path)] if path.exists() else []


def run_events(run, kind):
    return [e for e in events(run) if e["event"] == kind]


def final_val(run):
    """The run's last validation loss; None for a run that stopped (diverged) or has none yet."""
    if run_events(run, "stop"):
        return None
    return next((m["val_loss"] for m in reversed(metrics(run)) if m.get("val_loss") is not None), None)


def paired_line(groups, a, b, comparisons=1):
    """The final validation loss of group a minus group b, seed by seed, with its interval; with
    `comparisons` > 1 also its interval under Bonferroni's correction for that many."""
    finals = [(final_val(x), final_val(y)) for x, y in zip(groups[a], groups[b])]
    if any(None in pair for pair in finals):
        print(f"\n{a} − {b}: not paired, a run stopped or has not finished")
        return
    diffs = [x - y for x, y in finals]
    signs = sum(d < 0 for d in diffs)
    corrected = ""
    if comparisons > 1:
        m, w = statistics.fmean(diffs), bonferroni_half_width(diffs, comparisons)
        corrected = f"; at {100 * (1 - 0.05 / comparisons):.2f}% (Bonferroni, {comparisons}): [{m - w:+.4f}, {m + w:+.4f}]"
    print(f"\n{a} − {b}, final validation loss paired by seed: {mean_ci(diffs)} nats "
          f"({signs} of {len(diffs)} seeds lower; per seed {', '.join(f'{d:+.4f}' for d in diffs)}){corrected}")


def signed(text):
    """The report's ASCII minus signs as the docs print them (U+2212)."""
    return re.sub(r"(?<![\w])-(?=\d)", "\u2212", text)


def report_verdicts(sweep):
    """The rows of report.md's verdict table: {(group, criterion): {column: cell}}."""
    lines = (sweep / "report.md").read_text().splitlines()
    if "## Verdicts" not in lines:
        return {}
    section = lines[lines.index("## Verdicts") + 1:]
    section = section[:next((i for i, line in enumerate(section) if line.startswith("## ")), len(section))]
    table = [line for line in section if line.startswith("|") and not line.startswith("|---")]
    if not table:
        return {}
    columns = [c.strip() for c in table[0].strip("|").split(" | ")]
    verdicts = {}
    for line in table[1:]:
        cells = dict(zip(columns, (c.strip() for c in line.strip("|").split(" | "))))
        verdicts[(cells["group"], cells["criterion"].split(" (")[0])] = cells
    return verdicts


def verdict_cell(cells):
    """'pass ([+0.02, +1.06])': the corrected verdict with the interval it was decided on, and the
    verdict alone at 95% where it differs."""
    corrected = re.search(r"corrected for \d+ verdicts \(Holm\): (\[[^]]+\])", cells["why"])
    notes = [corrected.group(1)] if corrected else []
    if cells["alone"] != cells["verdict"]:
        notes.append(f"{cells['alone']} alone")
    return signed(cells["verdict"] + (f" ({'; '.join(notes)})" if notes else ""))


def verdict_table(groups, sweep):
    """Each group's final validation losses (per seed up to five seeds, else their count and
    interval), their mean, the paired gap to the baseline and a column per criterion, from the
    report of the sweep."""
    verdicts = report_verdicts(sweep)
    if not verdicts:
        return
    criteria = list(dict.fromkeys(criterion for _, criterion in verdicts))
    holm = re.search(r"corrected for (\d+) verdicts", next(iter(verdicts.values()))["why"])
    seeds = max(len(members) for members in groups.values())
    per_seed = seeds <= 5
    losses = ([f"seed {i + 1}" for i in range(seeds)] + ["mean"]) if per_seed else ["seeds", "mean ± 95%"]
    baseline = criteria[0].split(" of ")[-1]
    shown = baseline.upper() if baseline in ("bf16", "fp32") else baseline
    correction = f", Holm for {holm.group(1)}" if holm else ""
    header(["recipe"] + losses + [f"gap to {shown}, paired (95%)"]
           + [c.replace("within ", "verdict at ").replace(f" of {baseline}", "") + correction for c in criteria])
    for group, members in groups.items():
        finals = [final_val(r) for r in members]
        values = [v for v in finals if v is not None]
        if per_seed:
            cells = ([f"{v:.4f}" if v is not None else "stopped" if run_events(r, "stop") else ""
                      for r, v in zip(members, finals)] + [""] * (seeds - len(finals))
                     + [f"{statistics.fmean(values):.4f}" if values else "–"])
        elif len(values) > 1:
            cells = [str(len(values)), f"{statistics.fmean(values):.4f} ± {half_width(values):.4f}"]
        else:  # a sweep still running
            cells = [str(len(values)), f"{values[0]:.4f}" if values else "–"]
        judged = [verdicts.get((group, c)) for c in criteria]
        gap = re.search(r"gap ([^ ]+ \[[^]]+\])", judged[0]["why"]) if judged[0] else None
        row([group] + cells + [signed(gap.group(1)) if gap else "—"]
            + [verdict_cell(v) if v else "—" for v in judged])
    print()


def factorial_table(groups, base, act, grad, both):
    """Study 4's 2 x 2: E7M0 on activations, on gradients, on both, against `base`, by seed. The main
    effects average each change over the other factor's two levels; the interaction is what the
    two together cost beyond the sum of each alone."""
    seeds = list(zip(*(map(final_val, groups[g]) for g in (base, act, grad, both))))
    header(["effect on the final validation loss (nats, by seed)", "value"])
    row([f"{act} − {base}: activations alone", mean_ci([a - b for b, a, g, ab in seeds])])
    row([f"{grad} − {base}: gradients alone", mean_ci([g - b for b, a, g, ab in seeds])])
    row([f"{both} − {base}: both", mean_ci([ab - b for b, a, g, ab in seeds])])
    row(["main effect of E7M0 activations, ½[(act − base) + (both − grad)]",
         mean_ci([((a - b) + (ab - g)) / 2 for b, a, g, ab in seeds])])
    row(["main effect of E7M0 gradients, ½[(grad − base) + (both − act)]",
         mean_ci([((g - b) + (ab - a)) / 2 for b, a, g, ab in seeds])])
    row(["interaction, both − act − grad + base", mean_ci([ab - a - g + b for b, a, g, ab in seeds])])


# The per-step measures the study tables show: column title -> value of one metrics line.
COLUMNS = {
    "zero_in_pct": lambda m: point_mean(m, ":grad", "zero_in_pct"),
    "zero_out_pct": lambda m: point_mean(m, ":grad", "zero_out_pct"),
    "act rel_error": lambda m: point_mean(m, ":act", "rel_error"),
    "grad rel_error": lambda m: point_mean(m, ":grad", "rel_error"),
    "dY zero_out_pct, every copy": lambda m: point_mean(m, ":grad", "zero_out_pct", every_copy=True),
    "dY clipped_blocks_pct, every copy": lambda m: point_mean(m, ":grad", "clipped_blocks_pct", every_copy=True),
    "dY overflow_pct, every copy": lambda m: point_mean(m, ":grad", "overflow_pct", every_copy=True),
    "dY rel_error, every copy": lambda m: point_mean(m, ":grad", "rel_error", every_copy=True),
    "weight rel_error": lambda m: point_mean(m, ":weight", "rel_error"),
    "grad SNR (dB)": lambda m: tensor_mean(m, "grad_snr_db"),
    "update_success": lambda m: tensor_mean(m, "geometry", "update_success"),
    "Δcode variance": lambda m: tensor_mean(m, "geometry", "delta_code_variance"),
    "underflow": lambda m: tensor_mean(m, "geometry", "update_underflow"),
    "misalignment": lambda m: tensor_mean(m, "geometry", "misalignment"),
    "capacity": lambda m: tensor_mean(m, "geometry", "capacity"),
    "cos(Δw, −g)": lambda m: tensor_mean(m, "geometry", "alignment"),
    "corr(log g, log S)": lambda m: tensor_mean(m, "geometry", "grad_stiffness_correlation"),
    "dY kurtosis before H": lambda m: hadamard_mean(m, "kurtosis_before"),
    "dY kurtosis after H": lambda m: hadamard_mean(m, "kurtosis_after"),
}


def measure_cells(members, step, columns):
    """Each column's mean and interval over the group's runs at `step` ("–" where a run stopped first)."""
    lines = [line_at(r, step) for r in members]
    if None in lines:
        return ["–"] * len(columns)
    return [mean_ci([COLUMNS[c](m) for m in lines]) for c in columns]


GRADIENT_COLUMNS = ["zero_in_pct", "zero_out_pct", "grad rel_error", "grad SNR (dB)", "update_success", "Δcode variance"]
GEOMETRY_COLUMNS = ["underflow", "update_success", "misalignment", "capacity", "cos(Δw, −g)", "corr(log g, log S)"]


def gradient_table(groups, steps, columns=GRADIENT_COLUMNS):
    """Studies 1 and 11: the :grad points' zeros and error, and the gradient's signal, at the given
    steps; study 3: the matmul weights' geometry (docs/optimizers.md, "Geometry diagnostics")."""
    header(["group", "step", "val loss", *columns])
    for group, members in groups.items():
        for step in steps:
            val = mean_ci([final_val(r) for r in members]) if step == steps[-1] else ""
            row([group, str(step), val, *measure_cells(members, step, columns)])


def rounding_table(groups, step):
    """Study 4: loss beside the variance measures, at one diagnostic step."""
    columns = ["act rel_error", "grad rel_error", "grad SNR (dB)", "Δcode variance", "update_success"]
    header(["group", "val loss", *columns])
    for group, members in groups.items():
        row([group, mean_ci([final_val(r) for r in members]), *measure_cells(members, step, columns)])


def recipe_table(groups, step, columns):
    """Studies 8 to 10: each recipe's final validation loss beside the gradient's measures at `step`."""
    header(["group", "val loss", *columns])
    for group, members in groups.items():
        row([group, mean_ci([final_val(r) for r in members]), *measure_cells(members, step, columns)])


RANGE_FIT_BEST, RANGE_FIT_WORST = 12, 13  # the ranks docs/findings.md shows at each end


def range_fit_table(groups, step, every_rank=False):
    """Study 2: the FP32 runs' range fit of E1M6 at the best- and worst-fitting profiled points, or
    at every point with every_rank (means over seeds of the percentages that would overflow or
    flush to zero, and land in the subnormals)."""
    profiles = [metrics_at(r, step)["diag"]["profile"] for r in groups["fp32"]]
    rows = []
    for point in profiles[0]:
        fits = [p[point]["fit"] for p in profiles]
        lost = [f["overflow_pct"] + f["flush_pct"] for f in fits]
        rows.append((statistics.fmean(lost), point, lost, [f["subnormal_pct"] for f in fits],
                     [p[point]["dynamic_range"] for p in profiles]))
    header(["rank", "point (FP32 runs, step %d)" % step, "lost to E1M6: overflow + flush (%)", "subnormal (%)",
            "dynamic range log2(p99.9/p50)"])
    ranked = sorted(rows)
    best, worst = RANGE_FIT_BEST, len(ranked) - RANGE_FIT_WORST  # shown: ranks ≤ best and > worst
    shortened = not every_rank and best < worst
    for rank, (_, point, lost, subnormal, dynamic) in enumerate(ranked, 1):
        if shortened and rank == best + 1:
            row(["…", f"ranks {best + 1}–{worst} (--all prints them)", "", "", ""])
        if not shortened or rank <= best or rank > worst:
            row([str(rank), point, mean_ci(lost), mean_ci(subnormal), mean_ci(dynamic)])


def validation_text(run, out):
    """The run's validation split as a file: the last round(size · val_fraction) bytes of its corpus
    (a text file; "" is the default corpus, data/legal-corpus.txt)."""
    with open(run / "config.toml", "rb") as f:
        config = tomllib.load(f)
    corpus = pathlib.Path(config["data"] or ROOT / "data" / "legal-corpus.txt")
    if not corpus.is_file():
        raise SystemExit(f"findings_tables: {run}: the decomposition needs a text corpus, not {corpus}")
    data = corpus.read_bytes()
    out.write_bytes(data[len(data) - round(len(data) * config["val_fraction"]):])
    return out


def eval_loss(altgrad, checkpoint, text, recipe):
    # FINDINGS_MAX_WINDOWS (docs_numbers.sh --quick) evaluates only the split's first windows.
    windows = os.environ.get("FINDINGS_MAX_WINDOWS", "0")
    result = subprocess.run([altgrad, "eval", "--checkpoint", str(checkpoint), "--text", str(text), "--recipe", recipe,
                             "--max-windows", windows], capture_output=True, text=True, check=True)
    return float(result.stdout.strip().splitlines()[-1].split()[1])


def decomposition_table(groups, altgrad, scratch):
    """Study 6: each seed's FP32 and E7M0 models, each evaluated without and with E7M0 points (the
    E7M0 run's recipe, current scaling) on the whole validation split."""
    fp32, e7m0 = groups["fp32"], groups["e7m0"]
    text = validation_text(fp32[0], scratch / "val.txt")
    cells = {k: [] for k in ("ff", "fq", "qf", "qq")}
    for f_run, q_run in zip(fp32, e7m0):
        cells["ff"].append(eval_loss(altgrad, f_run, text, "fp32"))
        cells["fq"].append(eval_loss(altgrad, f_run, text, str(q_run)))
        cells["qf"].append(eval_loss(altgrad, q_run, text, "fp32"))
        cells["qq"].append(eval_loss(altgrad, q_run, text, str(q_run)))
    header(["weights trained in", "evaluated in FP32", "evaluated with E7M0 points"])
    row(["FP32", mean_ci(cells["ff"]), mean_ci(cells["fq"])])
    row(["E7M0", mean_ci(cells["qf"]), mean_ci(cells["qq"])])
    print()
    diff = lambda a, b: [x - y for x, y in zip(cells[a], cells[b])]  # noqa: E731
    header(["part of the gap (nats, paired by seed)", "value"])
    row(["total: E7M0-trained in E7M0 − FP32-trained in FP32", mean_ci(diff("qq", "ff"))])
    row(["quantization error at the E7M0-trained weights: in E7M0 − in FP32", mean_ci(diff("qq", "qf"))])
    row(["optimization error: E7M0-trained − FP32-trained weights, both in FP32", mean_ci(diff("qf", "ff"))])
    row(["quantization error at the FP32-trained weights (the format alone)", mean_ci(diff("fq", "ff"))])
    row(["optimization error: E7M0-trained − FP32-trained weights, both with E7M0 points", mean_ci(diff("qq", "fq"))])
    # Which part is which depends on the order the two changes are made in: the Shapley split takes
    # the mean of both orders, per seed, and its two parts still sum to the total.
    half_sum = lambda a, b: [(x + y) / 2 for x, y in zip(diff(*a), diff(*b))]  # noqa: E731
    row(["Shapley: quantization, ½[(in E7M0 − in FP32) at FP32-trained + at E7M0-trained weights]",
         mean_ci(half_sum(("fq", "ff"), ("qq", "qf")))])
    row(["Shapley: optimization, ½[(E7M0- − FP32-trained) in FP32 + with E7M0 points]",
         mean_ci(half_sum(("qf", "ff"), ("qq", "fq")))])
    print()
    step = diagnostic_steps(fp32[0])[-1]
    header(["group", f"grad SNR (dB) at step {step}", f"top Hessian eigenvalue at step {step}"])
    for group, members in groups.items():
        ms = [metrics_at(r, step) for r in members]
        row([group, mean_ci([tensor_mean(m, "grad_snr_db") for m in ms]),
             mean_ci([m["diag"].get("hessian", {}).get("top_eigenvalue") for m in ms])])


def mean_train_loss(run, first, last):
    """Mean of the run's logged training losses of steps first..last."""
    values = [m["loss"] for m in metrics(run) if first <= m["step"] <= last and "loss" in m]
    return statistics.fmean(values) if values else None


def schedule_table(groups, baseline, arms, windows):
    """Study 5: each arm's training loss against the baseline's on the same steps (so the same
    batches), in % paired by seed, window by window: a switch shows as a change between windows."""
    header(["group", *(f"steps {a}–{b}" for a, b in windows)])
    for group in arms:
        cells = []
        for a, b in windows:
            pairs = [(mean_train_loss(run, a, b), mean_train_loss(base, a, b))
                     for run, base in zip(groups[group], groups[baseline])]
            gaps = [100.0 * (mine / theirs - 1.0) for mine, theirs in pairs if mine is not None and theirs is not None]
            cells.append(mean_ci(gaps) + ("%" if gaps else ""))
        row([group, *cells])


def gap_by_step_table(groups, baseline, arms):
    """Study 11: the baseline's validation loss at every evaluation, and each arm's gap to it there,
    in % paired by seed: how a gap grows over one schedule (not across schedules of other lengths)."""
    steps = [m["step"] for m in metrics(groups[baseline][0]) if m.get("val_loss") is not None]
    header(["recipe", *(f"step {s:,}" for s in steps)])
    row([f"{baseline} (val loss)", *(mean_ci([metrics_at(r, s)["val_loss"] for r in groups[baseline]]) for s in steps)])
    for arm in arms:
        cells = []
        for s in steps:
            pairs = [(line_at(r, s), metrics_at(b, s)) for r, b in zip(groups[arm], groups[baseline])]
            gaps = [100.0 * (m["val_loss"] / base["val_loss"] - 1.0) for m, base in pairs if m is not None]
            cells.append(signed(f"{statistics.fmean(gaps):+.2f} ± {half_width(gaps):.2f}%")
                         if len(gaps) == len(pairs) else "—")  # a run stopped before step s
        row([f"{arm} (gap)", *cells])


def log_interval(logs):
    """'g [low, high]': 10 to the mean of log10 values and to its 95% interval's ends (3 digits)."""
    m = statistics.fmean(logs)
    if len(logs) < 2:
        return f"{10 ** m:.3g}"
    w = half_width(logs)
    return f"{10 ** m:.3g} [{10 ** (m - w):.3g}, {10 ** (m + w):.3g}]"


def threshold_table(sweep, baseline):
    """Study 12: each group's threshold search per seed (index.json's brackets); the threshold as the
    geometric mean of the brackets' log-scale midpoints √(stable · diverged) with its 95% interval
    over seeds, on log10 as in the report's "Thresholds over seeds"; the resolution, √(diverged /
    stable) of the widest bracket, by which one seed's midpoint may miss its threshold (the
    interval over seeds does not hold that error: three seeds in one bracket give an interval of
    zero width); and the ratio to the baseline's threshold, paired by seed. A search that ended at
    an end of its range has no midpoint."""
    index = json.loads((sweep / "index.json").read_text())
    searches, brackets = {}, {}
    for search in index["searches"]:
        searches.setdefault(search["group"], {})[search["seed"]] = search
        brackets.setdefault(search["group"], {})[search["seed"]] = search["bracket"]
    seeds = sorted({seed for per_seed in brackets.values() for seed in per_seed})

    def midpoint_log(bracket):
        return None if None in bracket else (math.log10(bracket[0]) + math.log10(bracket[1])) / 2

    def cell(search):
        """The bracket; where there is none, whether the search ended at an end of its range (its
        first probe, the low end, diverged, or its second, the high end, did not) or is unfinished."""
        (low, high), probes = search["bracket"], search["probes"]
        if None not in (low, high):
            return f"{low:.3g} – {high:.3g}"
        if probes and probes[0]["diverged"]:
            return f"< {probes[0]['value']:.3g}"
        if len(probes) >= 2 and not probes[1]["diverged"]:
            return f"> {probes[1]['value']:.3g}"
        return "unfinished"

    shown = baseline.upper() if baseline in ("bf16", "fp32") else baseline
    header(["recipe", *(f"seed {s}: stable – diverged" for s in seeds), "threshold (95%)", "resolution",
            f"ratio to {shown}, paired (95%)"])
    for group, per_seed in brackets.items():
        logs = {s: midpoint_log(b) for s, b in per_seed.items() if midpoint_log(b) is not None}
        base = brackets.get(baseline, {})
        ratios = [logs[s] - midpoint_log(base[s]) for s in logs
                  if group != baseline and s in base and midpoint_log(base[s]) is not None]
        widths = [math.log10(b[1] / b[0]) for b in per_seed.values() if None not in b]
        row([group, *(cell(searches[group][s]) if s in per_seed else "—" for s in seeds),
             log_interval(list(logs.values())) if logs else "—", f"×{10 ** (max(widths) / 2):.3g}" if widths else "—",
             log_interval(ratios) if ratios else "—"])


# AdamW at gridwalk's rate split (stiffness_power = 0): no grid of its own, gridwalk's rates.
SPLIT_CONTROL = "e7m0.adamw-split"


def rate_grid_table(groups, sweep, comparison):
    """Study 3's rate selection: each entry's final validation loss at every rate of its grid (the
    grid's one seed), the lowest marked. Where the comparison's sweep file runs an entry at another
    rate than its grid's lowest loss, the split control at another rate than gridwalk's, or a sweep
    file gives the bit-space optimizers' AdamW part another rate than E7M0 AdamW's lowest, says so
    (and --check fails)."""
    grids = {}  # entry: [(rate, final validation loss, or inf where the run stopped; cell)]
    for group, members in groups.items():
        entry, rate = re.fullmatch(r"(.+)\.lr([^a-z]+)", group).groups()
        stop, loss = run_events(members[0], "stop"), final_val(members[0])
        if stop:
            loss, cell = math.inf, f"diverged (step {stop[-1]['step']})"
        else:  # None: not finished
            cell = f"{loss:.4f}" if loss is not None else "–"
        grids.setdefault(entry, []).append((float(rate), loss, cell))
    compared = tomllib.loads(comparison.read_text())["runs"]
    chosen = {run["name"]: run["learning_rate"] for run in compared}
    header(["entry", "learning rate", "final val loss", "lowest"])
    best = {}
    for entry, grid in grids.items():
        finished = [(rate, loss) for rate, loss, _ in grid if loss is not None]
        if len(finished) == len(grid) and min(loss for _, loss in finished) < math.inf:
            best[entry] = min(finished, key=lambda rate_loss: rate_loss[1])[0]
        for rate, _, cell in grid:
            edge = ", at the grid's edge" if rate in (grid[0][0], grid[-1][0]) else ""
            row([entry, f"{rate:g}", cell, f"lowest{edge}" if rate == best.get(entry) else ""])
        if entry in best and chosen.get(entry) != best[entry]:
            CHECK_FAILURES.append(f"{comparison.name} runs {entry} at rate {chosen.get(entry)}, "
                                  f"its grid's lowest loss is at {best[entry]:g}")
    control = chosen.get(SPLIT_CONTROL)
    if "e7m0.gridwalk" in best and control is not None and control != best["e7m0.gridwalk"]:
        CHECK_FAILURES.append(f"{comparison.name} runs the control {SPLIT_CONTROL} at rate {control}, "
                              f"gridwalk's lowest loss is at {best['e7m0.gridwalk']:g}")
    part = best.get("e7m0.adamw")
    for name, runs in (("the grid's sweep.toml", tomllib.loads((sweep / "sweep.toml").read_text())["runs"]),
                       (comparison.name, compared)):
        rates = {run["adamw_learning_rate"] for run in runs if "adamw_learning_rate" in run}
        if part is not None and rates - {part}:
            CHECK_FAILURES.append(f"{name} gives the AdamW part rate {', '.join(map(str, sorted(rates)))}, "
                                  f"E7M0 AdamW's lowest loss is at {part:g}")
    for failure in CHECK_FAILURES:
        print(f"\n{failure}")


def warnings_table(groups):
    """The runs' own warnings (docs/quantization.md, "Warnings") by kind, summed over each group's seeds."""
    counts = {group: [w["kind"] for r in members for w in run_events(r, "warning")] for group, members in groups.items()}
    kinds = sorted({kind for found in counts.values() for kind in found})
    header(["group", *kinds])
    for group, found in counts.items():
        row([group, *(str(found.count(kind)) for kind in kinds)])


def memory_table(groups):
    """Bytes kept from step to step for weights and optimizer state, from the first seed's end event."""
    header(["group", "weight bytes", "optimizer state bytes", "parameters kept as codes"])
    for group, members in groups.items():
        end = run_events(members[0], "end")
        memory = end[-1]["memory"] if end else {}
        row([group, *(f"{memory[key]:,}" if key in memory else "–"
                      for key in ("weight_bytes", "optimizer_state_bytes", "code_weights"))])


def check(doc):
    """Exit status 1, naming them, where rows printed above are not lines of doc."""
    lines = set(pathlib.Path(doc).read_text().splitlines())
    rows = [r for r in PRINTED_ROWS if not r.startswith("| ---")]
    missing = [r for r in rows if r not in lines]
    print(f"\n{doc}: {len(rows) - len(missing)} of {len(rows)} rows quoted digit for digit")
    for r in missing:
        print(f"  not in {doc}: {r}")
    if missing or CHECK_FAILURES:
        sys.exit(1)


def main():
    args = sys.argv[1:]
    every_row = "--all" in args
    args = [a for a in args if a != "--all"]
    doc = None
    if "--check" in args:
        at = args.index("--check")
        if at + 1 >= len(args):
            sys.exit("findings_tables: --check needs the document to compare with")
        doc = args[at + 1]
        del args[at:at + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    study, sweep = args[0], pathlib.Path(args[1])
    altgrad = args[2] if len(args) > 2 else str(ROOT / "build" / "altgrad")
    groups = runs(sweep)
    steps = diagnostic_steps(next(iter(groups.values()))[0])
    verdict_table(groups, sweep)
    if study == "e7m0_gradients":
        gradient_table(groups, [steps[0], steps[-1]])
        paired_line(groups, "e7m0-grad-stochastic", "e7m0-grad")
    elif study == "stochastic_power_of_two":
        rounding_table(groups, steps[-1])
        paired_line(groups, "e7m0-stochastic", "e7m0-nearest")
        print()
        factorial_table(groups, "fp8-hybrid", "e7m0-act", "e7m0-grad", "e7m0-nearest")
        paired_line(groups, "e7m0-act", "e7m0-grad")
    elif study == "precision_schedules":
        header(["group", "final val loss"])
        for group, members in groups.items():
            row([group, mean_ci([final_val(r) for r in members])])
        print()
        windows = [(1, 100), (201, 300), (301, 400), (401, 500), (501, 600), (601, 700), (701, 800)]
        schedule_table(groups, "bf16", ["e4m3", "bf16-e4m3-e1m6", "e1m6-e4m3-bf16", "bf16-e4m3-e1m6-w", "e1m6-w"],
                       windows)
        paired_line(groups, "e1m6-e4m3-bf16", "bf16")
        paired_line(groups, "ft-e1m6", "ft-e4m3")
        paired_line(groups, "bf16-e4m3-e1m6-w", "e1m6-w")
    elif study == "phase1_criterion":
        pass  # its verdict table, above, is all it reports
    elif study in ("hopper_accumulation", "hopper_accumulation_wide"):
        for arm in ("hopper", "hopper-fast"):
            paired_line(groups, arm, "fp32-accumulation", 2)
    elif study == "e1m6_placement":
        range_fit_table(groups, steps[-1], every_row)
        paired_line(groups, "e1m6-post-ln-axis", "e1m6-post-ln")
    elif study == "e7m0_error_decomposition":
        with tempfile.TemporaryDirectory() as scratch:
            decomposition_table(groups, altgrad, pathlib.Path(scratch))
    elif study == "fp4_recipes":
        recipe_table(groups, steps[-1], ["dY zero_out_pct, every copy", "dY rel_error, every copy", "grad SNR (dB)",
                                         "dY kurtosis before H", "dY kurtosis after H"])
        paired_line(groups, "nvfp4", "mxfp4", 3)
        paired_line(groups, "e2m1-grad-hadamard", "e2m1-grad", 3)
        paired_line(groups, "e7m0-grad-hadamard", "e7m0-grad", 3)
    elif study == "fp4_backward":
        recipe_table(groups, steps[-1], ["dY zero_out_pct, every copy", "dY clipped_blocks_pct, every copy",
                                         "dY overflow_pct, every copy", "dY rel_error, every copy", "grad SNR (dB)",
                                         "dY kurtosis before H", "dY kurtosis after H"])
        paired_line(groups, "tseng-no-hadamard", "tseng", 2)
        paired_line(groups, "tseng-floor", "tseng", 2)
    elif study == "long_training":
        gap_by_step_table(groups, "bf16", ["fp8-hybrid", "e7m0-grad"])
        if steps:  # the first and last diagnostic steps, and two between
            print()
            gradient_table(groups, [s for s in steps if s in (steps[0], 800, 1500, steps[-1])])
        paired_line(groups, "e7m0-grad", "fp8-hybrid")
    elif study == "lr_threshold":
        threshold_table(sweep, "bf16")
    elif study == "stiffness_rates":
        rate_grid_table(groups, sweep, ROOT / "configs" / "studies" / "stiffness_e7m0.toml")
    elif study == "stiffness_e7m0":
        arms = [group for group in groups if group.startswith("e7m0.")]
        gap_by_step_table(groups, "bf16.adamw", arms)
        print()
        gradient_table(groups, [steps[0], steps[-1]], GEOMETRY_COLUMNS)
        print()
        warnings_table(groups)
        print()
        memory_table(groups)
        for arm in arms[1:]:
            paired_line(groups, arm, "e7m0.adamw")
        for gridwalk in ("e7m0.gridwalk", "e7m0.gridwalk-codes"):
            paired_line(groups, gridwalk, SPLIT_CONTROL, 2)
    elif study == "torchao_rowwise":
        recipe_table(groups, steps[-1], ["act rel_error", "weight rel_error", "grad rel_error", "zero_out_pct",
                                         "grad SNR (dB)"])
        paired_line(groups, "rowwise", "tensorwise", 2)
        paired_line(groups, "rowwise-gw-hp", "rowwise", 2)
    else:
        sys.exit(f"findings_tables: unknown study {study}")
    if doc:
        check(doc)


if __name__ == "__main__":
    main()
