#!/usr/bin/env bash
# `altgrad sweep --launcher slurm`, `--status` and `--cancel` on a real one-node cluster (run it
# through tests/slurm/cluster.sh, which provides SLURM_CONF):
#   1. a 4-run sweep submitted as an array (at most 2 at once) completes; its sweep directory
#      (sweep.toml, index.json, every run's config.toml) and each run's final checkpoint and metrics
#      (without the wall-clock tokens_per_s) equal the same sweep run locally with --jobs 2, bit for
#      bit, and so do their reports' tables (report.md); --status names each run's array task; a
#      rerun submits nothing;
#   2. the same sweep submitted held (--sbatch-arg=--hold): one task released and paused mid-run,
#      a resubmission is refused while it is active, `--cancel` cancels the whole array (the paused
#      run checkpoints on Slurm's SIGTERM); submitted again, the cancelled run resumes and all four
#      end equal to the local sweep;
#   3. a run that diverges (stop_loss_multiple) and one that cannot start (its data is missing):
#      --status shows each one's Slurm state and the diverged run's stop reason;
#   4. --status without Slurm's commands on PATH still prints the table and says why once;
#      Slurm flags without --launcher slurm, and a threshold search under Slurm, are refused (exit 2).
# Runs finish in about a second; nothing here waits to catch one mid-way except through a held
# task paused by its pid (as slurm_smoke_test.sh does), so a faster machine changes nothing.
#
#   slurm_sweep_test.sh ALTGRAD
set -euo pipefail
altgrad=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/slurm/run_helpers.sh"
[[ -n "${SLURM_CONF:-}" ]] || { echo "FAIL: no SLURM_CONF; run this through tests/slurm/cluster.sh run" >&2; exit 1; }

work=$(mktemp -d /tmp/altgrad_slurm_sweep.XXXXXX)
local_pid=
cleanup() {
  local dir
  for dir in "$work"/slurm "$work"/cancel "$work"/fail; do
    [[ -f "$dir/slurm/jobs.txt" ]] && scancel $(awk '{print $1}' "$dir/slurm/jobs.txt") 2>/dev/null
  done
  for _ in $(seq 150); do
    [[ -z "$(squeue -h -t RUNNING,COMPLETING -o %i 2>/dev/null)" ]] && break
    sleep 0.1
  done
  [[ -n "$local_pid" ]] && wait "$local_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  for out in "$work"/*/slurm/*.out; do [[ -f "$out" ]] && { echo "---- $out" >&2; tail -5 "$out" >&2; }; done
  squeue --states=all --array -o '%i %T %r' >&2 || true
  exit 1
}

# The array job id that `altgrad sweep --launcher slurm` printed.
job_of() { sed -n 's/^submitted array job \([0-9]*\):.*/\1/p' <<<"$1"; }
# No task of array job $1 that Slurm may still run (squeue's own view, read independently of altgrad).
array_done() { ! squeue -h --array --states=all -j "$1" -o %T 2>/dev/null | grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT)$'; }
# Slurm's state of task $1 ("1234_5") as squeue reports it, or "-" when it no longer does.
squeue_state() { local s; s=$(squeue -h --array --states=all -j "$1" -o '%T|%r' 2>/dev/null | head -n 1); [[ -n "$s" ]] || { echo -; return; }
  [[ "${s#*|}" == None ]] && echo "${s%|*}" || echo "${s%|*} (${s#*|})"; }
# Every run of sweep dir $1 ends as the local sweep's run does, bit for bit.
same_as_local() {
  local dir=$1 run
  for f in sweep.toml index.json; do cmp -s "$dir/$f" "$work/local/$f" || fail "$dir/$f differs from the local sweep's"; done
  for run in "${runs[@]}"; do
    cmp -s "$dir/runs/$run/config.toml" "$work/local/runs/$run/config.toml" || fail "$run: config.toml differs from the local sweep's"
    [[ "$(tree_sum "$dir/runs/$run/checkpoints/step_$steps")" == "$(tree_sum "$work/local/runs/$run/checkpoints/step_$steps")" ]] ||
      fail "$run: its final checkpoint under Slurm ($dir) differs from the local sweep's"
    [[ "$(metrics_without_speed "$dir/runs/$run/metrics.jsonl")" == "$(metrics_without_speed "$work/local/runs/$run/metrics.jsonl")" ]] ||
      fail "$run: metrics.jsonl under Slurm ($dir) differs from the local sweep's"
  done
  "$altgrad" report "$dir" >/dev/null || fail "altgrad report $dir failed"
  "$altgrad" report "$work/local" >/dev/null || fail "altgrad report $work/local failed"
  # Its first line names the directory; the tables below it must be the same bytes.
  cmp -s <(tail -n +2 "$dir/report.md") <(tail -n +2 "$work/local/report.md") ||
    fail "$dir/report.md differs from the local sweep's"
}

python3 - "$work/corpus.txt" <<'PY'
import random, sys
r = random.Random(7)
words = ["the", "court", "shall", "decide", "on", "appeal", "of", "a", "party", "within", "article"]
open(sys.argv[1], "w").write(" ".join(r.choice(words) for _ in range(30000)))
PY
steps=200
cat >"$work/four.toml" <<TOML
base = "$root/configs/tiny.toml"
[set]
data = "$work/corpus.txt"
max_iters = $steps
lr_decay_iters = $steps
checkpoint_interval = 100
keep_checkpoints = 0
[axes]
seed = [1, 2]
learning_rate = [1e-3, 2e-3]
TOML
runs=(seed1.lr1e-3 seed1.lr2e-3 seed2.lr1e-3 seed2.lr2e-3)

# The local reference, while the cluster works.
"$altgrad" sweep "$work/four.toml" --jobs 2 --out "$work/local" >"$work/local.log" 2>&1 &
local_pid=$!

# 1. The array completes.
out=$("$altgrad" sweep "$work/four.toml" --launcher slurm --out "$work/slurm" --array-limit 2 --time 10:00 --mem 500M) ||
  fail "altgrad sweep --launcher slurm failed: $out"
job=$(job_of "$out")
[[ -n "$job" ]] || fail "no job id in: $out"
grep -qx "#SBATCH --array=0-3%2" "$work/slurm/slurm/sweep.sbatch" || fail "the script has no --array=0-3%2 line"
[[ "$(cut -d' ' -f1,3 "$work/slurm/slurm/jobs.txt")" == "$job 0-3" ]] || fail "jobs.txt: $(cat "$work/slurm/slurm/jobs.txt")"
[[ "$(cat "$work/slurm/slurm/tasks.txt")" == "$(printf '%s\n' "${runs[@]}")" ]] || fail "tasks.txt lists $(cat "$work/slurm/slurm/tasks.txt")"
wait_until 120 "array job $job to finish" array_done "$job"
wait "$local_pid" || fail "the local sweep failed: $(cat "$work/local.log")"
local_pid=
same_as_local "$work/slurm"
status=$("$altgrad" sweep --status "$work/slurm")
[[ "$(head -n 1 <<<"$status")" == "run           state      step  val loss  slurm job  slurm state  stop reason" ]] ||
  fail "status header: $(head -n 1 <<<"$status")"
for i in "${!runs[@]}"; do
  row=$(grep "^${runs[$i]} " <<<"$status")
  state=$(squeue_state "${job}_$i")
  [[ "$state" == COMPLETED || "$state" == - ]] || fail "squeue says ${job}_$i is $state"
  [[ "$row" =~ ^${runs[$i]}\ +completed\ +$steps\ +[0-9.]+\ +${job}_$i\ +$state\ +completed$ ]] ||
    fail "status row of ${runs[$i]} (Slurm: $state): $row"
done
jobs_before=$(cat "$work/slurm/slurm/jobs.txt")
out=$("$altgrad" sweep "$work/four.toml" --launcher slurm --out "$work/slurm") || fail "rerun failed: $out"
[[ "$out" == *"nothing to submit: all 4 runs have finished"* ]] || fail "the rerun of a finished sweep said: $out"
[[ "$(cat "$work/slurm/slurm/jobs.txt")" == "$jobs_before" ]] || fail "the rerun of a finished sweep submitted a job"
echo "ok 1: 4-run array job $job completed, equal to the local --jobs 2 sweep bit for bit"

# 2. Held; task 1 released and paused mid-run; --cancel; submitted again.
cancel=$work/cancel
out=$("$altgrad" sweep "$work/four.toml" --launcher slurm --out "$cancel" --array-limit 1 --sbatch-arg=--hold) ||
  fail "held submission failed: $out"
held=$(job_of "$out")
scontrol release "${held}_1"
pid=$(pause_mid_run "$cancel/runs/${runs[1]}" "$steps")
if out=$("$altgrad" sweep "$work/four.toml" --launcher slurm --out "$cancel" 2>&1); then
  fail "a resubmission while the array runs was accepted: $out"
fi
[[ "$out" == *"${held}_1 (run ${runs[1]}) RUNNING"* ]] || fail "the refused resubmission said: $out"
out=$("$altgrad" sweep --cancel "$cancel") || fail "--cancel failed: $out"
[[ "$out" == *"cancelled array job(s) $held:"* && "$out" == *"${held}_1 (run ${runs[1]}) RUNNING"* &&
   "$out" == *"${held}_3 (run ${runs[3]}) PENDING (JobHeldUser)"* ]] || fail "--cancel said: $out"
sleep 0.5
kill -CONT "$pid" 2>/dev/null || true
wait_until 30 "the cancelled run to exit" eval "! kill -0 $pid 2>/dev/null"
wait_until 30 "array job $held to end" array_done "$held"
[[ "$(last_end "$cancel/runs/${runs[1]}")" == *'"interrupted":true'* ]] ||
  fail "the cancelled run did not checkpoint and end interrupted: $(last_end "$cancel/runs/${runs[1]}")"
for i in 0 2 3; do [[ ! -e "$cancel/runs/${runs[$i]}/metrics.jsonl" ]] || fail "held task $i ran"; done
out=$("$altgrad" sweep "$work/four.toml" --launcher slurm --out "$cancel") || fail "resubmission failed: $out"
[[ "$out" == *"resume ${runs[1]} from its last checkpoint"* && "$out" == *": 4 of 4 runs (tasks 0-3 "* ]] ||
  fail "the resubmission said: $out"
again=$(job_of "$out")
wait_until 120 "array job $again to finish" array_done "$again"
stopped=$(grep '"interrupted":true' "$cancel/runs/${runs[1]}/events.jsonl" | sed -n 's/.*"step":\([0-9]*\).*/\1/p' | head -n 1)
grep -q "\"event\":\"resume\".*\"step\":$stopped[,}]" "$cancel/runs/${runs[1]}/events.jsonl" ||
  fail "${runs[1]} did not resume from step $stopped"
same_as_local "$cancel"
[[ "$(wc -l <"$cancel/slurm/jobs.txt")" == 2 ]] || fail "jobs.txt after two submissions: $(cat "$cancel/slurm/jobs.txt")"
echo "ok 2: --cancel stopped array job $held at step $stopped of ${runs[1]}; resubmitted as $again, it resumed and all runs equal the local sweep"

# 3. Failures in --status.
cat >"$work/fail.toml" <<TOML
base = "$root/configs/tiny.toml"
[set]
data = "$work/corpus.txt"
[[runs]]
name = "wild"
learning_rate = 5.0
min_lr = 0.5
grad_clip = 0.0
stop_loss_multiple = 1.5
[[runs]]
name = "nodata"
data = "$work/no-such-corpus.txt"
TOML
out=$("$altgrad" sweep "$work/fail.toml" --launcher slurm --out "$work/fail") || fail "submission failed: $out"
failing=$(job_of "$out")
wait_until 60 "array job $failing to finish" array_done "$failing"
status=$("$altgrad" sweep --status "$work/fail")
wild=$(grep '^wild ' <<<"$status")
nodata=$(grep '^nodata ' <<<"$status")
state=$(squeue_state "${failing}_0")
[[ "$state" == "FAILED (NonZeroExitCode)" || "$state" == - ]] || fail "squeue says the diverged run's task is $state"
[[ "$wild" == "wild "*" stopped "*" ${failing}_0 "*" $state "*" loss diverged at step "* ]] ||
  fail "status of the diverged run (Slurm: $state): $wild"
state=$(squeue_state "${failing}_1")
[[ "$state" == "FAILED (NonZeroExitCode)" || "$state" == - ]] || fail "squeue says the run without data is $state"
[[ "$nodata" == "nodata "*" pending "*" ${failing}_1 "*" $state "*" -" ]] || fail "status of the run without data (Slurm: $state): $nodata"
# Its data put in place, the sweep submitted again: only the run that failed without ending is
# (sbatch's --array on the command line overriding the script's), and the diverged run stays as it was.
cp "$work/corpus.txt" "$work/no-such-corpus.txt"
wild_before=$(tree_sum "$work/fail/runs/wild")
out=$("$altgrad" sweep "$work/fail.toml" --launcher slurm --out "$work/fail") || fail "resubmission failed: $out"
[[ "$out" == *"skip wild: already stopped"* && "$out" == *": 1 of 2 runs (tasks 1 of "* ]] || fail "the resubmission said: $out"
second=$(job_of "$out")
wait_until 60 "array job $second to finish" array_done "$second"
[[ "$(last_end "$work/fail/runs/nodata")" == *'"reason":"completed"'* ]] || fail "nodata did not complete when resubmitted"
[[ "$(tree_sum "$work/fail/runs/wild")" == "$wild_before" ]] || fail "the diverged run was touched by the resubmission"
[[ ! -e "$work/fail/slurm/${second}_0.out" ]] || fail "task 0 (the diverged run) ran again"
[[ "$("$altgrad" sweep --status "$work/fail" | grep '^nodata ')" == *" completed "*" ${second}_1 "* ]] || fail "nodata's status after resubmission"
echo "ok 3: --status: $wild; the failed run alone resubmitted and completed"

# 4. Without Slurm's commands; flags that need the Slurm launcher; a search.
PATH=/nonexistent "$altgrad" sweep --status "$work/slurm" >"$work/status.out" 2>"$work/status.err" || fail "--status without Slurm failed"
[[ "$(wc -l <"$work/status.err")" == 1 && "$(cat "$work/status.err")" == "Slurm states unknown (shown as -): "*squeue* ]] ||
  fail "--status without Slurm's commands said: $(cat "$work/status.err")"
[[ "$(sed -n 2p "$work/status.out")" =~ ^${runs[0]}\ +completed\ +$steps\ +[0-9.]+\ +${job}_0\ +-\ +completed$ ]] ||
  fail "--status without Slurm's commands printed: $(cat "$work/status.out")"
set +e
err=$("$altgrad" sweep "$work/four.toml" --out "$work/x" --array-limit 2 2>&1); rc=$?
set -e
[[ $rc == 2 && "$err" == *"--array-limit is a flag of the Slurm launcher"* && ! -e "$work/x" ]] || fail "--array-limit without --launcher slurm: exit $rc: $err"
printf '[search]\nkind = "lr_threshold"\nlow = 1e-4\nhigh = 1e-1\nsteps = 10\n' | cat "$work/four.toml" - | sed '/^\[axes\]/,/^learning_rate/d' >"$work/search.toml"
set +e
err=$("$altgrad" sweep "$work/search.toml" --launcher slurm --out "$work/search" 2>&1); rc=$?
set -e
[[ $rc == 2 && "$err" == *"the Slurm launcher does not run searches"* && ! -e "$work/search" ]] || fail "a search under Slurm: exit $rc: $err"
echo "ok 4: --status without Slurm, flag and search refusals"

# 5. A finetune that warm-starts from a BF16 run of the same sweep (init_from = "@pre"): a second
#    array job that Slurm starts only after the first has ended; the same bits as --jobs 2 here.
cat >"$work/warm.toml" <<TOML
base = "$root/configs/tiny.toml"
[set]
data = "$work/corpus.txt"
max_iters = 40
lr_decay_iters = 40
[recipes.ft]
init_from = "@pre"
quant.preset = "fp8-hybrid"
[recipes.pre]
quant.preset = "bf16"
[axes]
recipe = ["ft", "pre"]
TOML
"$altgrad" sweep "$work/warm.toml" --jobs 2 --out "$work/warm_local" >"$work/warm_local.log" 2>&1 ||
  fail "the local warm-start sweep failed: $(cat "$work/warm_local.log")"
out=$("$altgrad" sweep "$work/warm.toml" --launcher slurm --out "$work/warm" --time 10:00 --mem 500M) ||
  fail "the warm-start sweep under Slurm failed: $out"
[[ "$(grep -c '^submitted array job' <<<"$out")" == 2 && "$out" == *"after array job"* ]] ||
  fail "expected two array jobs, the second after the first: $out"
finetune_job=$(grep '^submitted array job' <<<"$out" | tail -n 1 | sed 's/^submitted array job \([0-9]*\):.*/\1/')
wait_until 120 "array job $finetune_job to finish" array_done "$finetune_job"
for run in ft pre; do
  [[ "$(last_end "$work/warm/runs/$run")" == *'"reason":"completed"'* ]] || fail "$run under Slurm did not complete"
  [[ "$(tree_sum "$work/warm/runs/$run/checkpoints/step_40")" == "$(tree_sum "$work/warm_local/runs/$run/checkpoints/step_40")" ]] ||
    fail "$run: its final checkpoint under Slurm differs from the local sweep's"
done
grep -q '^init_from_step = 40 ' "$work/warm/runs/ft/config.toml" || fail "ft did not start from pre's final checkpoint"
echo "ok 5: a warm start from a run of the same sweep waits for it under Slurm, same bits as locally"
echo "ok: altgrad sweep --launcher slurm, --status and --cancel on a real cluster"
