"""scripts/findings_tables.py's verdict table and its --check against a constructed sweep: two
groups of three seeds, final losses written by hand into metrics.jsonl, and a report.md whose
verdict rows are the report's format with hand-picked numbers. The expected rows are those numbers
as findings.md prints them (four decimals, U+2212 minus signs, the corrected interval, `alone`
where it differs)."""
import csv
import json
import pathlib
import re
import subprocess
import sys
import tomllib

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "findings_tables.py"

LOSSES = {"bf16": [2.0, 2.1, 2.2], "fp8": [2.02, 2.12, 2.23]}
VERDICTS = """# Report: sweep

## Verdicts

Each criterion of the sweep file, for every group but its baseline.

| criterion | group | verdict | alone | why | sign test | seeds for 80% power | sign of the gap |
|---|---|---|---|---|---|---|---|
| within 1% of bf16 (3 seeds, 30 steps) | fp8 | inconclusive | pass | gap +1.11% [-0.10, +2.32] over 3 seeds, straddles 1%; corrected for 2 verdicts (Holm): [-0.50, +2.70] at 97.50%, straddles 1% | p = 0.25 (3 of 3 positive) | 5 | not resolved with 3 seeds |
| within 2% of bf16 (3 seeds, 30 steps) | fp8 | pass | pass | gap +1.11% [-0.10, +2.32] over 3 seeds, upper end within 2%; corrected for 2 verdicts (Holm): [-0.50, +1.90] at 97.50%, upper end within 2% | p = 0.25 (3 of 3 positive) | 3 | not resolved with 3 seeds |

## Runs

| run | group |
|---|---|
| fp8.seed1 | fp8 |
"""
EXPECTED = [
    "| recipe | seed 1 | seed 2 | seed 3 | mean | gap to BF16, paired (95%) | verdict at 1%, Holm for 2 "
    "| verdict at 2%, Holm for 2 |",
    "| bf16 | 2.0000 | 2.1000 | 2.2000 | 2.1000 | — | — | — |",
    "| fp8 | 2.0200 | 2.1200 | 2.2300 | 2.1233 | +1.11% [−0.10, +2.32] | inconclusive ([−0.50, +2.70]; pass alone) "
    "| pass ([−0.50, +1.90]) |",
]


def make_sweep(root):
    sweep = make_runs(root, {group: {30: losses} for group, losses in LOSSES.items()})
    (sweep / "report.md").write_text(VERDICTS)
    return sweep


def tables(sweep, *extra):
    return subprocess.run([sys.executable, str(SCRIPT), "phase1_criterion", str(sweep), *extra],
                          capture_output=True, text=True)


def test_verdict_table_prints_the_findings_rows(tmp_path):
    out = tables(make_sweep(tmp_path))
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    assert rows == EXPECTED


def test_check_passes_on_the_quoted_rows_and_names_a_changed_digit(tmp_path):
    sweep = make_sweep(tmp_path)
    doc = tmp_path / "findings.md"
    doc.write_text("Some text.\n\n" + "\n".join(EXPECTED[:1] + ["|---|---|"] + EXPECTED[1:]) + "\n")
    passed = tables(sweep, "--check", str(doc))
    assert passed.returncode == 0, passed.stdout
    assert "3 of 3 rows quoted digit for digit" in passed.stdout
    doc.write_text(doc.read_text().replace("2.1233", "2.1234"))
    failed = tables(sweep, "--check", str(doc))
    assert failed.returncode == 1
    assert f"not in {doc}: {EXPECTED[2]}" in failed.stdout


def make_runs(root, losses_by_step, searches=None):
    """A sweep whose runs log the given validation losses {group: {step: [per seed]}}; with
    `searches`, an index.json holding them."""
    sweep = root / "sweep"
    sweep.mkdir()
    with open(sweep / "summary.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["run", "group", "seed"])
        for group, by_step in losses_by_step.items():
            for seed in range(1, 4):
                run = sweep / "runs" / f"{group}.seed{seed}"
                run.mkdir(parents=True)
                lines = [{"step": step, "val_loss": losses[seed - 1]} for step, losses in by_step.items()]
                (run / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in lines))
                writer.writerow([f"{group}.seed{seed}", group, seed])
    (sweep / "report.md").write_text("# Report: sweep\n")
    if searches is not None:
        (sweep / "index.json").write_text(json.dumps({"searches": searches}))
    return sweep


def printed_rows(study, sweep):
    out = subprocess.run([sys.executable, str(SCRIPT), study, str(sweep)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.splitlines() if line.startswith("| ") and not line.startswith("| ---")]


def test_long_training_prints_each_gap_at_each_evaluation(tmp_path):
    # Step 250: gaps +1, +2, +3% (mean 2, sd 1, half-width 4.303 / √3 = 2.484). Step 500: +1, +1, 0%
    # (mean 0.6667, sd 0.5774, half-width 1.434); BF16 2.0, 2.1, 2.2 (half-width 4.303 · 0.1 / √3 = 0.25).
    sweep = make_runs(tmp_path, {"bf16": {250: [3.0, 3.0, 3.0], 500: [2.0, 2.1, 2.2]},
                                 "fp8-hybrid": {250: [3.03, 3.06, 3.09], 500: [2.02, 2.121, 2.2]},
                                 "e7m0-grad": {250: [3.0, 3.0, 3.0], 500: [2.0, 2.1, 2.2]}})
    rows = printed_rows("long_training", sweep)
    assert rows[:4] == ["| recipe | step 250 | step 500 |",
                        "| bf16 (val loss) | 3 ± 0 | 2.1 ± 0.25 |",
                        "| fp8-hybrid (gap) | +2.00 ± 2.48% | +0.67 ± 1.43% |",
                        "| e7m0-grad (gap) | +0.00 ± 0.00% | +0.00 ± 0.00% |"]


def test_lr_threshold_gives_geometric_means_and_paired_ratios(tmp_path):
    # Midpoints on log10: bf16 -2.5, -1.5, -2 (mean -2, sd 0.5, half-width 4.303 · 0.5 / √3 = 1.2422);
    # fp8 -3.5, -1.5, -2.5 (mean -2.5, sd 1); fp8 against bf16 per seed -1, 0, -0.5 (mean -0.5,
    # sd 0.5). e7m0's first seed diverged at the range's low end: no midpoint. Resolution: half the
    # widest bracket, 10^(2/2) for bf16's two-decade seed 3, 10^(1/2) for the others' one decade.
    def search(group, seed, stable, diverged):
        probes = [{"value": 1e-3, "diverged": stable is None}] + ([{"value": 0.1, "diverged": True}] if stable else [])
        return {"kind": "lr_threshold", "group": group, "seed": seed, "key": "learning_rate",
                "bracket": [stable, diverged], "probes": probes}
    searches = [search("bf16", 1, 1e-3, 1e-2), search("bf16", 2, 1e-2, 1e-1), search("bf16", 3, 1e-3, 1e-1),
                search("fp8", 1, 1e-4, 1e-3), search("fp8", 2, 1e-2, 1e-1), search("fp8", 3, 1e-3, 1e-2),
                search("e7m0", 1, None, 1e-3), search("e7m0", 2, 1e-3, 1e-2), search("e7m0", 3, 1e-2, 1e-1),
                # Still running: its low end stable, its high end not yet probed.
                {"group": "e3m4", "seed": 1, "bracket": [1e-3, None], "probes": [{"value": 1e-3, "diverged": False}]}]
    sweep = make_runs(tmp_path, {"bf16": {300: [2.0, 2.0, 2.0]}}, searches)
    assert printed_rows("lr_threshold", sweep) == [
        "| recipe | seed 1: stable – diverged | seed 2: stable – diverged | seed 3: stable – diverged "
        "| threshold (95%) | resolution | ratio to BF16, paired (95%) |",
        "| bf16 | 0.001 – 0.01 | 0.01 – 0.1 | 0.001 – 0.1 | 0.01 [0.000573, 0.175] | ×10 | — |",
        "| fp8 | 0.0001 – 0.001 | 0.01 – 0.1 | 0.001 – 0.01 | 0.00316 [1.04e-05, 0.965] | ×3.16 | 0.316 [0.0181, 5.52] |",
        "| e7m0 | < 0.001 | 0.001 – 0.01 | 0.01 – 0.1 | 0.01 [4.44e-09, 2.25e+04] | ×3.16 | 0.562 [1.66e-10, 1.9e+09] |",
        "| e3m4 | unfinished | — | — | — | — | — |",
    ]


def test_stiffness_rates_marks_the_lowest_and_holds_the_comparison_to_it(tmp_path):
    # The comparison's own file names the rates E7M0 AdamW and gridwalk run at; grids around them
    # with those rates lowest pass, and the same grids with the lowest losses elsewhere fail --check
    # on every count: the comparison's rates, the split control's (held at gridwalk's rate) and its
    # bit-space entries' AdamW part (held at E7M0 AdamW's rate). A run that stopped is "diverged",
    # never the lowest, even with a low loss logged before it stopped.
    comparison = tomllib.loads((SCRIPT.parents[1] / "configs" / "studies" / "stiffness_e7m0.toml").read_text())
    rate_of = {run["name"]: run["learning_rate"] for run in comparison["runs"]}
    chosen, walk = rate_of["e7m0.adamw"], rate_of["e7m0.gridwalk"]
    assert rate_of["e7m0.adamw-split"] == walk
    low, high, top = chosen / 4, chosen * 4, chosen * 16
    grid = {f"e7m0.adamw.lr{low:g}": {800: [2.1, 2.1, 2.1]}, f"e7m0.adamw.lr{chosen:g}": {800: [2.0, 2.0, 2.0]},
            f"e7m0.adamw.lr{high:g}": {800: [2.05, 2.05, 2.05]}, f"e7m0.adamw.lr{top:g}": {200: [1.0, 1.0, 1.0]},
            "e7m0.madam.lr1": {200: [1.0, 1.0, 1.0]},
            f"e7m0.gridwalk.lr{walk:g}": {800: [1.95, 1.95, 1.95]}, f"e7m0.gridwalk.lr{walk * 2:g}": {800: [2.2] * 3}}
    sweep_file = f'[[runs]]\nname = "e7m0.madam"\nadamw_learning_rate = {chosen!r}\n'

    def sweep_of(name):
        (tmp_path / name).mkdir()
        sweep = make_runs(tmp_path / name, grid)
        (sweep / "sweep.toml").write_text(sweep_file)
        for group in (f"e7m0.adamw.lr{top:g}", "e7m0.madam.lr1"):
            (sweep / "runs" / f"{group}.seed1" / "events.jsonl").write_text('{"event":"stop","step":271}\n')
        return sweep

    diverged = [f"| e7m0.adamw | {top:g} | diverged (step 271) |  |", "| e7m0.madam | 1 | diverged (step 271) |  |"]
    out = subprocess.run([sys.executable, str(SCRIPT), "stiffness_rates", str(sweep_of("a"))],
                         capture_output=True, text=True)
    assert out.returncode == 0 and " at rate " not in out.stdout, out.stdout + out.stderr
    assert printed_rows("stiffness_rates", tmp_path / "a" / "sweep") == [
        "| entry | learning rate | final val loss | lowest |",
        f"| e7m0.adamw | {low:g} | 2.1000 |  |",
        f"| e7m0.adamw | {chosen:g} | 2.0000 | lowest |",
        f"| e7m0.adamw | {high:g} | 2.0500 |  |",
        *diverged,
        f"| e7m0.gridwalk | {walk:g} | 1.9500 | lowest, at the grid's edge |",
        f"| e7m0.gridwalk | {walk * 2:g} | 2.2000 |  |",
    ]
    grid[f"e7m0.adamw.lr{high:g}"] = {800: [1.9, 1.9, 1.9]}
    grid[f"e7m0.gridwalk.lr{walk * 2:g}"] = {800: [1.8, 1.8, 1.8]}
    rows = ["| entry | learning rate | final val loss | lowest |", f"| e7m0.adamw | {low:g} | 2.1000 |  |",
            f"| e7m0.adamw | {chosen:g} | 2.0000 |  |", f"| e7m0.adamw | {high:g} | 1.9000 | lowest |", *diverged,
            f"| e7m0.gridwalk | {walk:g} | 1.9500 |  |", f"| e7m0.gridwalk | {walk * 2:g} | 1.8000 | lowest, at the grid's edge |"]
    doc = tmp_path / "results.md"
    doc.write_text("\n".join(rows) + "\n")
    out = subprocess.run([sys.executable, str(SCRIPT), "stiffness_rates", str(sweep_of("b")), "--check", str(doc)],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert "8 of 8 rows quoted digit for digit" in out.stdout
    assert f"runs e7m0.adamw at rate {chosen}, its grid's lowest loss is at {high:g}" in out.stdout
    assert f"runs e7m0.gridwalk at rate {walk}, its grid's lowest loss is at {walk * 2:g}" in out.stdout
    assert f"runs the control e7m0.adamw-split at rate {walk}, gridwalk's lowest loss is at {walk * 2:g}" \
        in out.stdout
    assert f"the grid's sweep.toml gives the AdamW part rate {chosen}, E7M0 AdamW's lowest loss is at {high:g}" \
        in out.stdout


def test_a_stopped_run_has_no_final_loss_gap_or_pairing(tmp_path):
    # e7m0-grad's seed 2 stopped after step 250 (a stop event, no step 500): its gap at step 500 is
    # not taken over the two seeds left, and it is not paired; the loss it logged before stopping
    # is no final loss.
    sweep = make_runs(tmp_path, {"bf16": {250: [3.0, 3.0, 3.0], 500: [2.0, 2.1, 2.2]},
                                 "fp8-hybrid": {250: [3.0, 3.0, 3.0], 500: [2.0, 2.1, 2.2]},
                                 "e7m0-grad": {250: [3.03, 3.06, 3.09], 500: [2.02, 2.121, 2.2]}})
    stopped = sweep / "runs" / "e7m0-grad.seed2"
    (stopped / "metrics.jsonl").write_text(json.dumps({"step": 250, "val_loss": 3.06}) + "\n")
    (stopped / "events.jsonl").write_text('{"event":"stop","step":271}\n')
    out = subprocess.run([sys.executable, str(SCRIPT), "long_training", str(sweep)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "| e7m0-grad (gap) | +2.00 ± 2.48% | — |" in out.stdout
    assert "e7m0-grad − fp8-hybrid: not paired, a run stopped or has not finished" in out.stdout


def test_range_fit_shortens_to_the_best_and_worst_points_unless_all(tmp_path):
    # 30 points, point k losing k% (seed 1) and k + 2% (seeds 2, 3): ranked by the mean over seeds,
    # the page's table shows ranks 1-12 and 18-30 with one row for those left out; --all every rank.
    sweep = make_runs(tmp_path, {"fp32": {800: [2.0, 2.0, 2.0]}, "e1m6-post-ln": {800: [2.1, 2.1, 2.1]},
                                 "e1m6-post-ln-axis": {800: [2.0, 2.1, 2.2]}})
    for seed in (1, 2, 3):
        profile = {f"p{k:02d}": {"fit": {"overflow_pct": 0.0, "flush_pct": k + (2.0 if seed > 1 else 0.0),
                                        "subnormal_pct": 50.0}, "dynamic_range": 2.0} for k in range(30, 0, -1)}
        line = {"step": 800, "val_loss": 2.0, "diag": {"profile": profile}}
        (sweep / "runs" / f"fp32.seed{seed}" / "metrics.jsonl").write_text(json.dumps(line) + "\n")
    rows = printed_rows("e1m6_placement", sweep)
    assert rows[1] == "| 1 | p01 | 2.333 ± 2.9 | 50 ± 0 | 2 ± 0 |", rows[1]
    assert [r.split(" | ")[0] for r in rows[1:]] == \
        [f"| {k}" for k in range(1, 13)] + ["| …"] + [f"| {k}" for k in range(18, 31)]
    assert rows[13] == "| … | ranks 13–17 (--all prints them) |  |  |  |"
    every = subprocess.run([sys.executable, str(SCRIPT), "e1m6_placement", str(sweep), "--all"],
                           capture_output=True, text=True)
    assert every.returncode == 0, every.stderr
    assert [line.split(" | ")[0] for line in every.stdout.splitlines() if line.startswith("| ") and "---" not in line][1:] \
        == [f"| {k}" for k in range(1, 31)]


def test_docs_numbers_runs_every_study_and_findings_tables_knows_each():
    # A study file that docs_numbers.sh never runs has numbers on the page that nothing regenerates.
    root = SCRIPT.parents[1]
    script = (root / "scripts" / "docs_numbers.sh").read_text()
    loop = re.search(r"for study in (.*?); do", script, re.S).group(1).replace("\\\n", " ")
    run = set(loop.split()) | set(re.findall(r"^\s*run_study (\w+) ", script, re.M))
    studies = {path.stem for path in (root / "configs" / "studies").glob("*.toml")}
    assert run == studies, f"not run: {studies - run}; not a study: {run - studies}"
    usage = SCRIPT.read_text().split('"""')[1]
    assert all(f" {study} " in usage.replace("|", " ").replace("\n", " ") for study in studies), usage


def test_fp4_backward_averages_every_copy_of_dy(tmp_path):
    # Two :grad points, each with a row-wise copy and a column-wise one (dgrad's dY and wgrad's), and
    # an :act point the dY columns must skip. Seed s shifts every count by s - 2, so each mean is
    # the middle seed's and the half-width t(0.975, 2)/sqrt(3) = 2.48.
    groups = ["bf16", "tseng", "tseng-no-hadamard", "tseng-floor"]
    sweep = make_runs(tmp_path, {group: {800: [2.0, 2.0, 2.0]} for group in groups})
    for group in groups:
        for seed in (1, 2, 3):
            shift = seed - 2

            def copy(zero, clipped, overflow, error):
                return {"zero_out_pct": zero + shift, "clipped_blocks_pct": clipped + shift,
                        "overflow_pct": overflow + shift, "rel_error": error}
            quant = {"h.0.attn.c_attn:grad": {**copy(10, 20, 1, 0.1), "colwise": copy(20, 30, 3, 0.3),
                                              "hadamard": {"wgrad": {"kurtosis_before": 40, "kurtosis_after": 8}}},
                     "h.0.mlp.c_fc:grad": {**copy(30, 40, 5, 0.5), "colwise": copy(40, 50, 7, 0.7)},
                     "h.0.mlp.c_fc:act": {**copy(99, 99, 99, 0.9), "colwise": copy(99, 99, 99, 0.9)}}
            line = {"step": 800, "val_loss": 2.0, "quant": quant,
                    "diag": {"grad_snr_db": {"h.0.mlp.c_fc.weight": 12.0, "wte.weight": 0.0}}}
            (sweep / "runs" / f"{group}.seed{seed}" / "metrics.jsonl").write_text(json.dumps(line) + "\n")
    rows = printed_rows("fp4_backward", sweep)
    assert rows[0] == ("| group | val loss | dY zero_out_pct, every copy | dY clipped_blocks_pct, every copy "
                       "| dY overflow_pct, every copy | dY rel_error, every copy | grad SNR (dB) "
                       "| dY kurtosis before H | dY kurtosis after H |")
    assert rows[1] == "| bf16 | 2 ± 0 | 25 ± 2.5 | 35 ± 2.5 | 4 ± 2.5 | 0.4 ± 0 | 12 ± 0 | 40 ± 0 | 8 ± 0 |", rows[1]
