#!/usr/bin/env python3
"""`altgrad report --summary` statistics against an independent computation: numpy for means and
standard deviations, and Student t quantiles found here by integrating the t density numerically
(math.lgamma, Simpson's rule, bisection), not by the engine's closed form. Each case is a small
sweep directory written here with chosen final validation losses: several seeds, two seeds, one
seed, identical values, a diverged seed, unpaired seeds and a missing baseline; and each group's
verdict on three criteria (the second naming the groups it judges, so that only they join Holm's
family; the third asking for more steps than the runs have), decided here from the documented rule
(docs/experiments.md, "Verdicts").
usage: statistics_check.py ALTGRAD"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from sweep_files import write_sweep


def t_central(t, dof, intervals=4000):
    norm = math.exp(math.lgamma((dof + 1) / 2) - math.lgamma(dof / 2)) / math.sqrt(dof * math.pi)
    h = 2 * t / intervals
    xs = np.linspace(-t, t, intervals + 1)
    f = norm * (1 + xs * xs / dof) ** (-(dof + 1) / 2)
    return h / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())


def t_critical(dof, confidence=0.95):
    lo, hi = 0.0, 64.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_central(mid, dof) < confidence else (lo, mid)
    return hi


def f_cdf(f, d1, d2, intervals=20000):
    """P(F <= f): the F density integrated by Simpson's rule in u = sqrt(x), where it is smooth."""
    if f <= 0:
        return 0.0
    log_beta = math.lgamma(d1 / 2) + math.lgamma(d2 / 2) - math.lgamma((d1 + d2) / 2)
    u = np.linspace(0, math.sqrt(f), intervals + 1)
    x = u * u
    with np.errstate(divide="ignore", invalid="ignore"):
        g = 2 * u * np.exp((d1 / 2 - 1) * np.log(x) + (d1 / 2) * math.log(d1 / d2)
                           - ((d1 + d2) / 2) * np.log1p(d1 * x / d2) - log_beta)
    g[0] = 2 * math.exp(0.5 * math.log(d1 / d2) - log_beta) if d1 == 1 else 0.0
    h = u[1] - u[0]
    return h / 3 * (g[0] + g[-1] + 4 * g[1:-1:2].sum() + 2 * g[2:-1:2].sum())


def spread(values, base):
    """(sd ratio, two-sided F test p, Brown-Forsythe p or None) of two samples."""
    a, b = np.asarray(values, dtype=float), np.asarray(base, dtype=float)
    ratio = a.std(ddof=1) / b.std(ddof=1)
    lower = f_cdf(ratio * ratio, len(a) - 1, len(b) - 1)
    za, zb = np.abs(a - np.median(a)), np.abs(b - np.median(b))
    grand = np.concatenate([za, zb]).mean()
    between = len(za) * (za.mean() - grand) ** 2 + len(zb) * (zb.mean() - grand) ** 2
    within = ((za - za.mean()) ** 2).sum() + ((zb - zb.mean()) ** 2).sum()
    n = len(a) + len(b)
    levene = None if within == 0 else 1 - f_cdf((n - 2) * between / within, 1, n - 2)
    return ratio, min(1.0, 2 * min(lower, 1 - lower)), levene


def interval(values):
    """(mean, half width) of the 95% Student t interval, or (mean, None) for one value."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return x.mean(), None
    return x.mean(), t_critical(len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))


def summary(binary, root):
    out = subprocess.run([binary, "report", root, "--summary"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0]: line for line in out.splitlines() if line.strip() and not line.startswith("report")}


NUMBER = r"([-+]?\d+\.\d+)"


class Check:
    def __init__(self):
        self.failures = 0

    def near(self, what, got, want, tolerance):
        ok = abs(got - want) <= tolerance
        self.failures += not ok
        print(f"{'ok' if ok else 'MISMATCH':8s} {what}: report {got:.6f}, numpy {want:.6f}")

    def true(self, what, ok, line):
        self.failures += not ok
        print(f"{'ok' if ok else 'FAIL':8s} {what}" + ("" if ok else f"\n         line: {line}"))


def check_group(check, line, name, values, base=None):
    finals = [v for v in values.values() if v != "diverged"]
    mean, half = interval(finals)
    m = re.search(r"val loss " + NUMBER + r"(?: ± " + NUMBER + r")? \((\d+) seeds?\)", line)
    check.true(f"{name}: mean, interval and seed count printed", m is not None, line)
    if not m:
        return
    check.near(f"{name} mean", float(m.group(1)), mean, 5e-5)
    check.true(f"{name} seeds = {len(finals)}", int(m.group(3)) == len(finals), line)
    check.true(f"{name} has an interval iff 2+ seeds", (m.group(2) is not None) == (half is not None), line)
    if half is not None and m.group(2):
        check.near(f"{name} 95% half width", float(m.group(2)), half, 5e-5)
    if base is None:
        return
    base_finals = {s: v for s, v in base.items() if v != "diverged"}
    check_spread(check, line, name, finals, list(base_finals.values()))
    gaps = [100 * (v - base_finals[s]) / base_finals[s] for s, v in values.items() if v != "diverged" and s in base_finals]
    check.near(f"{name} gap of means %", float(re.search(NUMBER + r"% vs bf16", line).group(1)),
               100 * (mean - np.mean(list(base_finals.values()))) / np.mean(list(base_finals.values())), 5e-3)
    if len(gaps) >= 2:
        p = re.search(r"paired " + NUMBER + r"% \[" + NUMBER + ", " + NUMBER + r"\], (\d+) of (\d+) seeds agree: (\w+)", line)
        check.true(f"{name}: paired interval printed", p is not None, line)
        if not p:
            return
        gap_mean, gap_half = interval(gaps)
        check.near(f"{name} paired gap %", float(p.group(1)), gap_mean, 5e-3)
        check.near(f"{name} paired low %", float(p.group(2)), gap_mean - gap_half, 5e-3)
        check.near(f"{name} paired high %", float(p.group(3)), gap_mean + gap_half, 5e-3)
        agree = sum(1 for g in gaps if g * gap_mean > 0)
        check.true(f"{name}: {agree} of {len(gaps)} seeds agree", (int(p.group(4)), int(p.group(5))) == (agree, len(gaps)), line)
        resolved = gap_mean - gap_half > 0 or gap_mean + gap_half < 0
        check.true(f"{name}: {'resolved' if resolved else 'not resolved'}", (p.group(6) == "resolved") == resolved, line)
    elif len(gaps) == 1:
        check.true(f"{name}: one paired seed has no interval", "1 paired seed: no interval" in line, line)
    unpaired = sorted(f"{name}.seed{s}" for s, v in values.items() if v != "diverged" and s not in base_finals)
    unpaired += sorted(f"bf16.seed{s}" for s in base_finals if s not in values or values[s] == "diverged")
    if unpaired:
        check.true(f"{name}: unpaired runs named", all(u in line for u in unpaired), line)


def check_spread(check, line, name, finals, base_finals):
    m = re.search(r"sd ×([\d.e+-]+) of bf16's \(F p = ([\d.e+-]+), Levene p = ([\d.e+-]+|-)\)", line)
    testable = len(finals) >= 2 and len(base_finals) >= 2 and np.std(finals) > 0 and np.std(base_finals) > 0
    check.true(f"{name}: spread against bf16 printed iff both have a spread", (m is not None) == testable, line)
    if not m or not testable:
        return
    ratio, f_p, levene = spread(finals, base_finals)
    check.near(f"{name} sd ratio", float(m.group(1)), ratio, 5e-3 * ratio)
    check.near(f"{name} F test p", float(m.group(2)), f_p, 1e-3)
    check.true(f"{name}: Levene p given iff defined", (m.group(3) == "-") == (levene is None), line)
    if levene is not None:
        check.near(f"{name} Levene p", float(m.group(3)), levene, 1e-3)


LAST_STEP = 20  # every run's last metrics line


ALPHA = 0.05  # the family-wise level: every interval the report shows is 95%


def alone_verdict(criterion, values, base):
    """The rule of docs/experiments.md for one verdict by itself: diverged → fail; too few paired
    seeds or steps → inconclusive; then the paired gap's 95% interval against the threshold. Returns
    the verdict and, where the interval decided, the paired gaps."""
    if any(v == "diverged" for v in values.values()):
        return "fail", None
    base_finals = {s: v for s, v in base.items() if v != "diverged"}
    gaps = [100 * (v - base_finals[s]) / base_finals[s] for s, v in values.items() if s in base_finals]
    if len(gaps) < max(2, criterion["min_seeds"]) or LAST_STEP < criterion["min_steps"]:
        return "inconclusive", None
    mean, half = interval(gaps)
    if mean + half <= criterion["max_gap_pct"]:
        return "pass", gaps
    return ("fail" if mean - half > criterion["max_gap_pct"] else "inconclusive"), gaps


def p_value(gaps, threshold):
    """Two-sided p of "mean gap = threshold": Student t by the integrated density."""
    x = np.asarray(gaps, dtype=float)
    sd = x.std(ddof=1)
    if sd == 0:
        return 0.0 if x.mean() != threshold else 1.0
    t = abs(x.mean() - threshold) / (sd / math.sqrt(len(x)))
    return max(0.0, 1 - t_central(t, len(x) - 1))


def holm_rejections(p):
    """Holm (1979), step by step: reject the smallest p while p_(j) <= ALPHA / (m - j + 1)."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    rejected = set()
    for j, i in enumerate(order):
        if p[i] > ALPHA / (len(p) - j):
            break
        rejected.add(i)
    return rejected


def seeds_for_power(gaps, threshold, alpha, power=0.8):
    x = np.asarray(gaps, dtype=float)
    sd, distance = x.std(ddof=1), abs(x.mean() - threshold)
    for n in range(2, 1001):
        if (t_critical(n - 1, 1 - alpha) + t_critical(n - 1, 2 * power - 1)) * sd / math.sqrt(n) <= distance:
            return n
    return None


def check_verdicts(check, lines, groups, criteria, base):
    verdicts = {}
    for line in lines.values():
        m = re.match(r"verdict (\S+): within ([\d.]+)% of bf16: (\w+)", line)
        if m:
            verdicts[(m.group(1), float(m.group(2)))] = (m.group(3), line)
    cases = [(criterion, name, values) for criterion in criteria for name, (_, values) in groups.items()
             if name != "bf16" and name in criterion.get("groups", [name])]
    for criterion in criteria:  # a group the criterion does not name gets no verdict on it
        for name in set(groups) - set(criterion.get("groups", groups)) - {"bf16"}:
            check.true(f"verdict {name} within {criterion['max_gap_pct']}%: not judged",
                       (name, criterion["max_gap_pct"]) not in verdicts, str(verdicts.get((name, criterion["max_gap_pct"]))))
    alone = [alone_verdict(c, values, base) for c, _, values in cases]
    decided = [i for i, (_, gaps) in enumerate(alone) if gaps is not None]
    p = [p_value(alone[i][1], cases[i][0]["max_gap_pct"]) for i in decided]
    rejected = {decided[k] for k in holm_rejections(p)}
    seen = set()
    for i, (criterion, name, values) in enumerate(cases):
        verdict, gaps = alone[i]
        threshold = criterion["max_gap_pct"]
        if gaps is not None:
            verdict = ("pass" if np.mean(gaps) < threshold else "fail") if i in rejected else "inconclusive"
        got, line = verdicts.get((name, threshold), ("missing", ""))
        seen.add(verdict)
        check.true(f"verdict {name} within {threshold}%: {verdict} (Holm over {len(decided)})", got == verdict, f"{got}: {line}")
        if gaps is not None:
            check.true(f"verdict {name} within {threshold}% alone at 95%: {alone[i][0]}",
                       f"alone at 95%: {alone[i][0]};" in line, line)
            needed = seeds_for_power(gaps, threshold, ALPHA / len(decided))
            m = re.search(r"seeds for 80% power: (\d+|over 1000)", line)
            check.true(f"verdict {name} within {threshold}%: seeds for 80% power {needed}",
                       m is not None and m.group(1) == (str(needed) if needed else "over 1000"), line)
    check.true("the cases reach every verdict", seen == {"pass", "fail", "inconclusive"}, str(seen))


def main():
    binary = os.path.abspath(sys.argv[1])
    check = Check()
    bf16 = {1: 2.000, 2: 2.030, 3: 1.990, 4: 2.010}
    groups = {
        "bf16": ("bf16", bf16),
        "fp8": ("fp8-hybrid", {1: 2.020, 2: 2.055, 3: 2.012, 4: 2.031}),     # resolved: always worse
        "e3m4": ("fp8-hybrid", {1: 2.010, 2: 2.020, 3: 2.000, 4: 2.015}),    # straddles 0
        "noisy": ("fp8-hybrid", {1: 2.040, 2: 2.030, 3: 2.030, 4: 2.010}),   # mean gap 1%, interval past 2%
        "twoseeds": ("fp8-hybrid", {1: 2.100, 2: 2.140}),
        "oneseed": ("fp8-hybrid", {3: 2.500}),
        "same": ("fp8-hybrid", {1: 2.2, 2: 2.2, 3: 2.2}),
        "diverged": ("fp8-hybrid", {1: 2.050, 2: "diverged", 3: 2.040, 4: 2.060}),
        "unpaired": ("fp8-hybrid", {1: 2.050, 3: 2.060, 7: 2.070}),
    }
    criteria = [{"baseline": "bf16", "max_gap_pct": 2.0, "min_seeds": 2, "min_steps": 0},
                {"baseline": "bf16", "max_gap_pct": 1.0, "min_seeds": 3, "min_steps": 0,
                 "groups": ["fp8", "e3m4", "noisy", "twoseeds", "diverged"]},
                {"baseline": "bf16", "max_gap_pct": 3.0, "min_seeds": 2, "min_steps": 1000}]
    with tempfile.TemporaryDirectory() as root:
        write_sweep(root, groups, criteria)
        out = subprocess.run([binary, "report", root, "--summary"], capture_output=True, text=True, check=True).stdout
        check_verdicts(check, {i: l for i, l in enumerate(out.splitlines())}, groups, criteria, bf16)
        lines = summary(binary, root)
        for name, (_, values) in groups.items():
            if name != "bf16":
                check_group(check, lines.get(name, ""), name, values, bf16)
        check.true("diverged: counted", "(1 of 4 runs diverged)" in lines.get("diverged", ""), lines.get("diverged"))
    with tempfile.TemporaryDirectory() as root:
        write_sweep(root, {"fp32": ("fp32", {1: 2.0, 2: 2.1}), "fp8": ("fp8-hybrid", {1: 2.2, 2: 2.3})})
        lines = summary(binary, root)
        check_group(check, lines.get("fp8", ""), "no baseline: fp8", {1: 2.2, 2: 2.3})
        check.true("no baseline: said so", "no bf16 baseline" in lines.get("fp8", ""), lines.get("fp8"))
    print(f"{check.failures} mismatches")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
