#!/usr/bin/env bash
# End-to-end checks of `altgrad sweep` with real training processes on tiny runs: a SIGKILL in the
# middle of a sweep and a rerun (finished runs keep their bytes, the interrupted one resumes and
# ends bit-identical to an uninterrupted sweep's), --jobs 1 against --jobs 2, a diverged run among
# completed ones, --status, a learning-rate threshold search, and errors in the sweep file.
# Usage: sweep_tests.sh PATH_TO_ALTGRAD
set -uo pipefail
altgrad=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
sweep_pid=
cleanup() {
  [[ -n "$sweep_pid" ]] && kill -9 "$sweep_pid" 2>/dev/null
  if [[ -n "${KEEP:-}" ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
source "$(dirname "$0")/checks.sh"

# Every file of a directory with its SHA-256, in path order.
hashes() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# The files of a run's final checkpoint (parameters, optimizer, quantization state, state.json).
final_checkpoint() { (cd "$1/checkpoints/step_$2" && sha256sum ./*); }

# A generated corpus, so the tests need no downloaded data.
python3 -c "import random; r=random.Random(1); print(' '.join(r.choice(['law','court','article','shall','apply','party']) for _ in range(20000)))" >"$work/corpus.txt"

# Three runs of 200 steps, a checkpoint every 50: two recipes on seed 1, one on seed 2.
cat >"$work/three.toml" <<TOML
[base]
n_layer = 2
n_head = 2
n_embd = 32
block_size = 32
batch_size = 4
warmup_iters = 2
max_iters = 200
lr_decay_iters = 200
eval_interval = 100
eval_iters = 2
log_interval = 1
diag_interval = 5
checkpoint_interval = 50
keep_checkpoints = 0
data = "$work/corpus.txt"

[recipes.fp32]
quant.preset = "fp32"

[recipes.e3m4]
quant.preset = "fp8-hybrid"
quant.act.format = "e3m4"
quant.weight.format = "e3m4"

[[runs]]
recipe = "fp32"
seed = 1
[[runs]]
recipe = "e3m4"
seed = 1
[[runs]]
recipe = "e3m4"
seed = 2
TOML
runs=(fp32.seed1 e3m4.seed1 e3m4.seed2)

# 1. An uninterrupted sweep on two jobs: the reference.
out=$("$altgrad" sweep "$work/three.toml" --jobs 2 --out "$work/reference" 2>&1)
check "uninterrupted sweep exit status" 0 $?
contains "threads divided" "2 at a time, $(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 )) thread(s) each" "$out"
contains "the sweep ends with its report" "report: $work/reference/report.html" "$out"
check "summary.csv has a row per run" 3 "$(($(wc -l <"$work/reference/summary.csv") - 1))"
for run in "${runs[@]}"; do
  check "$run completed" completed "$(python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1])][-1]["reason"])' "$work/reference/runs/$run/events.jsonl")"
done

# 2. The same sweep on one job, killed (SIGKILL) while its second run is past its step-50 checkpoint.
"$altgrad" sweep "$work/three.toml" --jobs 1 --out "$work/killed" >"$work/killed.log" 2>&1 &
sweep_pid=$!
second="$work/killed/runs/${runs[1]}"
for _ in $(seq 1 3000); do
  [[ -d "$second/checkpoints/step_50" ]] && break
  sleep 0.01
done
kill -9 "$sweep_pid"
wait "$sweep_pid" 2>/dev/null
sweep_pid=
sleep 0.3
size=$(stat -c %s "$second/metrics.jsonl")
sleep 0.5
check "the killed sweep's run died with it" "$size" "$(stat -c %s "$second/metrics.jsonl")"
check "the second run was interrupted" "" "$(grep -o '"event":"end"' "$second/events.jsonl")"
check "the third run had not started" "no" "$([[ -e "$work/killed/runs/${runs[2]}/metrics.jsonl" ]] && echo yes || echo no)"
first_before=$(hashes "$work/killed/runs/${runs[0]}")
sweep_toml_before=$(sha256sum <"$work/killed/sweep.toml")

out=$("$altgrad" sweep "$work/three.toml" --jobs 1 --out "$work/killed" 2>&1)
check "rerun exit status" 0 $?
contains "rerun skips the finished run" "skip ${runs[0]}: already completed" "$out"
contains "rerun resumes the interrupted run" "resume ${runs[1]} from its last checkpoint" "$out"
check "the finished run's files are byte-identical" "$first_before" "$(hashes "$work/killed/runs/${runs[0]}")"
check "sweep.toml is not rewritten" "$sweep_toml_before" "$(sha256sum <"$work/killed/sweep.toml")"
for run in "${runs[@]}"; do
  check "$run: final checkpoint equals the uninterrupted --jobs 2 sweep's" \
    "$(final_checkpoint "$work/reference/runs/$run" 200)" "$(final_checkpoint "$work/killed/runs/$run" 200)"
done
# The logged losses too (tokens_per_s is wall-clock and excluded, docs/determinism.md).
losses() { python3 -c 'import json,sys; print([(m["step"], m["loss"], m.get("val_loss")) for m in map(json.loads, open(sys.argv[1]))])' "$1"; }
check "resumed run logs the same losses" "$(losses "$work/reference/runs/${runs[1]}/metrics.jsonl")" \
  "$(losses "$work/killed/runs/${runs[1]}/metrics.jsonl")"

# 3. --status: one row per run, read from the run directories.
status=$("$altgrad" sweep --status "$work/killed")
check "status exit status" 0 $?
check "status header" "run         state      step  val loss  stop reason" "$(head -1 <<<"$status")"
val=$(python3 -c 'import json,sys; print("%.4f" % [json.loads(l) for l in open(sys.argv[1])][-1]["val_loss"])' "$second/metrics.jsonl")
check "status row" "e3m4.seed1  completed   200    $val  completed" "$(sed -n 3p <<<"$status")"

# 4. A run that diverges stops; the others complete; the exit status says not all completed.
cat >"$work/diverge.toml" <<TOML
base = "$root/configs/tiny.toml"
[set]
data = "$work/corpus.txt"
[[runs]]
name = "calm"
[[runs]]
name = "wild"
learning_rate = 5.0
min_lr = 0.5
grad_clip = 0.0
stop_loss_multiple = 1.5
[[runs]]
name = "calm-too"
seed = 2
TOML
out=$("$altgrad" sweep "$work/diverge.toml" --jobs 2 --out "$work/diverge" 2>&1)
check "sweep with a diverged run exit status" 1 $?
status=$("$altgrad" sweep --status "$work/diverge")
contains "calm completed" "calm      completed    20" "$status"
contains "calm-too completed" "calm-too  completed    20" "$status"
wild=$(grep '^wild' <<<"$status")
contains "wild stopped" "wild      stopped" "$wild"
if [[ "$wild" == *"loss diverged at step"* || "$wild" == *"non-finite"* ]]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL wild's stop reason: $wild"; fi
# The report, rewritten after each run, names the diverged run's stop reason too.
reason=$(python3 -c 'import json,sys; print([e for e in map(json.loads, open(sys.argv[1])) if e["event"] == "end"][-1]["reason"])' \
  "$work/diverge/runs/wild/events.jsonl")
contains "the report shows wild's stop reason" "$reason" "$(grep '^| wild ' "$work/diverge/report.md")"

# 5. A threshold search: low stable, high diverged, two bisections between them.
cat >"$work/search.toml" <<TOML
base = "$root/configs/tiny.toml"
[set]
data = "$work/corpus.txt"
[axes]
grad_clip = [0.0]    # no clipping: large rates blow up within the 15 steps
[search]
kind = "lr_threshold"
low = 1e-3
high = 30.0
bisections = 2
steps = 15
loss_multiple = 1.5
TOML
out=$("$altgrad" sweep "$work/search.toml" --jobs 1 --out "$work/search" 2>&1)
check "search exit status" 0 $?
summary=$(python3 - "$work/search" <<'PY'
import json, math, sys
d = sys.argv[1]
index = json.load(open(d + "/index.json"))
s = index["searches"][0]
probes = s["probes"]
def ended(run):
    events = [json.loads(l) for l in open(d + "/runs/" + run + "/events.jsonl")]
    return [e for e in events if e["event"] == "end"][-1]["reason"]
consistent = all((ended(p["run"]) != "completed") == p["diverged"] for p in probes)
values = [p["value"] for p in probes]
stable = max([p["value"] for p in probes if not p["diverged"]])
diverged = min([p["value"] for p in probes if p["diverged"]])
mids_ok = math.isclose(values[2], math.sqrt(1e-3 * 30.0), rel_tol=1e-12)
width = math.log10(s["bracket"][1]) - math.log10(s["bracket"][0])
print(len(probes), s["group"], probes[0]["run"], consistent, s["bracket"] == [stable, diverged], mids_ok,
      round(width, 9) == round(math.log10(30.0 / 1e-3) / 4, 9))
PY
)
check "search probes, group, naming, bracket" "4 grad_clip0 grad_clip0.lr-probe1 True True True True" "$summary"

# A search with a seed axis: each seed searched apart, its probes named and seeded after it; the
# report's "Thresholds over seeds" row is the geometric mean of the brackets' midpoints.
sed 's/^grad_clip = \[0.0\].*/&\nseed = [1, 2]/; s/^bisections = 2/bisections = 1/' "$work/search.toml" >"$work/seeded.toml"
out=$("$altgrad" sweep "$work/seeded.toml" --jobs 2 --out "$work/seeded" 2>&1)
check "seeded search exit status" 0 $?
summary=$(python3 - "$work/seeded" <<'PY'
import json, math, sys, tomllib
d = sys.argv[1]
index = json.load(open(d + "/index.json"))
searches = index["searches"]
names = [p["run"] for s in searches for p in s["probes"]]
seeded = all(tomllib.load(open(f"{d}/runs/{p['run']}/config.toml", "rb"))["seed"] == s["seed"]
             for s in searches for p in s["probes"])
mids = [math.sqrt(s["bracket"][0] * s["bracket"][1]) for s in searches]
row = next(l for l in open(d + "/report.md") if l.startswith("| grad_clip0 | learning_rate | 2 |"))
print(len(searches), [s["seed"] for s in searches], names[0], names[-1].split(".lr-")[0], seeded,
      math.isclose(float(row.split(" | ")[3]), math.sqrt(mids[0] * mids[1]), rel_tol=1e-8))
PY
)
check "seeded search: one per seed, names, seeds, geometric mean" \
  "2 [1, 2] grad_clip0.seed1.lr-probe1 grad_clip0.seed2 True True" "$summary"

# 6. Bad input: exit status 2 and a message naming file, line, key and value; nothing started.
printf 'base = "%s"\n[axes]\nlearning_rate = [1e-3, -1.0]\n' "$root/configs/tiny.toml" >"$work/bad.toml"
out=$("$altgrad" sweep "$work/bad.toml" --out "$work/bad" 2>&1)
check "bad sweep exit status" 2 $?
contains "bad sweep message" "bad.toml:3: learning_rate = -1.0 is not allowed" "$out"
check "bad sweep started nothing" "no" "$([[ -e "$work/bad" ]] && echo yes || echo no)"

# A corpus that is not there fails the sweep before any run starts, naming the run and the path.
printf 'base = "%s"\n[set]\ndata = "%s"\n[axes]\nseed = [1, 2]\n' "$root/configs/tiny.toml" "$work/no-corpus.txt" >"$work/nodata.toml"
out=$("$altgrad" sweep "$work/nodata.toml" --out "$work/nodata" 2>&1)
check "sweep without its corpus exit status" 2 $?
contains "sweep without its corpus message" "run seed1: its corpus $work/no-corpus.txt does not exist; no run was started" "$out"
check "sweep without its corpus started nothing" "no" "$([[ -e "$work/nodata" ]] && echo yes || echo no)"

# The main job's sweep file expands into its six recipes, every config valid.
out=$("$altgrad" sweep "$root/configs/ablation.toml" --list 2>&1)
check "ablation --list exit status" 0 $?
check "ablation runs" "$(for r in fp32 bf16 fp8-hybrid e3m4 e1m6 e7m0; do printf '%s ' $r.seed{1,2,3}; done | sed 's/ $//')" \
  "$(cut -d' ' -f1 <<<"$out" | paste -sd' ')"
contains "ablation e1m6 settings" 'e1m6.seed2  {"quant.act.format":"e1m6","quant.preset":"fp8-hybrid","quant.weight.format":"e1m6","seed":2}' "$out"

# The research notes' studies (configs/studies/, one sweep per open question): every sweep
# file expands, every run's config valid; they are never trained here.
for study in e7m0_gradients:12 e1m6_placement:21 stiffness_rates:32 stiffness_e7m0:27 stochastic_power_of_two:18 \
             precision_schedules:27 e7m0_error_decomposition:6 phase1_criterion:40 hopper_accumulation:9 \
             hopper_accumulation_wide:9 fp4_recipes:24 fp4_backward:12 torchao_rowwise:12 long_training:9 \
             lr_threshold:15; do
  out=$("$altgrad" sweep "$root/configs/studies/${study%%:*}.toml" --list 2>&1)
  check "study ${study%%:*} --list exit status" 0 $?
  check "study ${study%%:*} runs" "${study##*:}" "$(grep -c '{' <<<"$out")"
done
# docs/results.md's sweep: each bit-space optimizer leaves the tensors it does not move to AdamW at
# E7M0 AdamW's rate; the split's control is AdamW (stiffness_power 0) at gridwalk's two rates.
out=$("$altgrad" sweep "$root/configs/studies/stiffness_e7m0.toml" --list 2>&1)
contains "stiffness_e7m0 madam settings" 'e7m0.madam.seed3  {"adamw_learning_rate":0.01,"learning_rate":0.03,' "$out"
contains "stiffness_e7m0 split control settings" \
  'e7m0.adamw-split.seed3  {"adamw_learning_rate":0.01,"learning_rate":0.003,"min_lr":0.00030000000000000003,"optimizer":"stiffness_adamw","quant.preset":"fp8-hybrid","quant.weight.format":"e7m0","seed":3,"stiffness_power":0}' \
  "$out"

# 7. The precision-schedule study (configs/precision_schedule.toml), shrunk 50-fold to the tiny
#    model: every run completes, each schedule switches at its scaled steps, the report marks them.
ROOT=$root CORPUS=$work/corpus.txt perl -pe 's/^base = .*/base = "$ENV{ROOT}\/configs\/tiny.toml"/;
  s/^\[set\]$/[set]\ndata = "$ENV{CORPUS}"/; s/(max_iters|lr_decay_iters|min_steps) = 800/$1 = 16/;
  s/(eval_interval|checkpoint_interval) = 200/$1 = 8/; s/start = (\d+)/"start = " . int($1 \/ 50)/ge;
  s/^seed = .*/seed = [1]/' "$root/configs/precision_schedule.toml" >"$work/schedule.toml"
out=$("$altgrad" sweep "$work/schedule.toml" --jobs 2 --out "$work/schedule" 2>&1)
check "schedule sweep exit status" 0 $?
contains "schedule sweep completed" "sweep done: 6 completed, 0 stopped, 0 failed" "$out"
switches() { grep -o '"event":"phase".*' "$work/schedule/runs/$1/events.jsonl" | grep -o '"step":[0-9]*' | cut -d: -f2 | paste -sd' '; }
check "bf16-e4m3-e1m6 switches" "6 12" "$(switches bf16-e4m3-e1m6.seed1)"
check "fp8-bf16-breaks switches" "4 6 10 12" "$(switches fp8-bf16-breaks.seed1)"
check "fp8-hybrid has no switches" "" "$(switches fp8-hybrid.seed1)"
contains "report marks the switches" '"phases":{"bf16-e4m3-e1m6":[6,12],"e1m6-e4m3-bf16":[6,12],"fp8-bf16-breaks":[4,6,10,12],"late-fp8":[12]}' \
  "$(cat "$work/schedule/report.html")"

# 8. A warm start from a run of the same sweep (init_from = "@pre"): listed first, it still starts
#    only after its source has ended, and from the source's final checkpoint.
printf 'base = "%s"\n[set]\ndata = "%s"\nmax_iters = 12\nlr_decay_iters = 12\n[recipes.ft]\ninit_from = "@pre"\n[recipes.pre]\nquant.preset = "bf16"\n[axes]\nrecipe = ["ft", "pre"]\nseed = [1, 2]\n' \
  "$root/configs/tiny.toml" "$work/corpus.txt" >"$work/warm.toml"
out=$("$altgrad" sweep "$work/warm.toml" --jobs 2 --out "$work/warm" 2>&1)
check "warm sweep exit status" 0 $?
order=$(grep -oE '(start|completed) (ft|pre)\.seed[12]' <<<"$out" | paste -sd,)
for seed in 1 2; do
  source_done=$(grep -n "completed pre.seed$seed" <<<"${order//,/$'\n'}" | cut -d: -f1)
  ft_start=$(grep -n "start ft.seed$seed" <<<"${order//,/$'\n'}" | cut -d: -f1)
  check "ft.seed$seed starts after pre.seed$seed completed ($order)" yes "$([[ -n "$source_done" && -n "$ft_start" && $ft_start -gt $source_done ]] && echo yes || echo no)"
  contains "ft.seed$seed starts from pre.seed$seed's last checkpoint" "init_from_step = 12 " "$(cat "$work/warm/runs/ft.seed$seed/config.toml")"
done
printf 'base = "%s"\n[recipes.ft]\ninit_from = "@nothing"\n[axes]\nrecipe = ["ft"]\n' "$root/configs/tiny.toml" >"$work/orphan.toml"
out=$("$altgrad" sweep "$work/orphan.toml" --list 2>&1)
check "init_from naming no group: exit status" 2 $?
contains "init_from naming no group: message" "init_from = \"@nothing\" (in run 'ft'): no run of group 'nothing'" "$out"

echo "sweep_tests: $passed passed, $failed failed"
((failed == 0))
