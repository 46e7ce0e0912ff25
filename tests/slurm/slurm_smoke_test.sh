#!/usr/bin/env bash
# A sweep as a Slurm job array on a real one-node cluster (run it through tests/slurm/cluster.sh,
# which provides SLURM_CONF). Four tiny runs, one array task each, from the generated script:
#   0 short      completes untouched;
#   1 cancelled  `scancel` mid-run: it checkpoints on Slurm's SIGTERM; the array is then submitted
#                again, the finished run is not rerun (same bytes) and this one resumes;
#   2 requeued   `scontrol requeue` mid-run: checkpoints, restarts (SLURM_RESTART_COUNT 1), resumes;
#   3 warned     the time-limit warning (USR1 to the batch shell, as --signal=B:USR1@... sends it):
#                checkpoints and requeues itself, then resumes.
# Runs can finish in under a second on an idle machine, faster than a test can react; so the array is
# submitted held and its tasks released one at a time, each run to interrupt is paused (SIGSTOP, by
# its pid) once mid-run, Slurm's signal is sent, and the run is continued (SIGCONT, as Slurm itself
# sends with SIGTERM): it then stops at the next step boundary.
# Every run must end byte-identical (final checkpoint files; metrics.jsonl without the wall-clock
# field) to the same config trained straight through outside Slurm.
#
# Submission, task states and cancelling go through tests/slurm/slurm_tool (src/sweep's C++: the
# script writer, sbatch, squeue/sacct parsing, scancel); scontrol and `scancel --signal` play the
# cluster's part.
#
#   slurm_smoke_test.sh ALTGRAD SLURM_TOOL
set -euo pipefail
altgrad=$(realpath "$1")
tool=$(realpath "$2")
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/slurm/run_helpers.sh"
[[ -n "${SLURM_CONF:-}" ]] || { echo "FAIL: no SLURM_CONF; run this through tests/slurm/cluster.sh run" >&2; exit 1; }

work=$(mktemp -d /tmp/altgrad_slurm_smoke.XXXXXX)
job= again=
# However the test ends: its jobs cancelled and gone, the reference runs finished, then the files.
cleanup() {
  local id
  for id in $job $again; do "$tool" cancel "$id" 2>/dev/null || true; done
  for _ in $(seq 150); do
    [[ -z "$(squeue -h -t RUNNING,COMPLETING -o %i 2>/dev/null)" ]] && break
    sleep 0.1
  done
  wait
  rm -rf "$work"
}
trap cleanup EXIT
sweep=$work/sweep
long_steps=400

fail() {
  echo "FAIL: $*" >&2
  for out in "$sweep"/slurm/*.out; do [[ -f "$out" ]] && { echo "---- $out" >&2; cat "$out" >&2; }; done
  squeue --states=all -o '%i %T %r' >&2 || true
  exit 1
}

# "INDEX JOB_ID STATE REASON" per task of array job $1, as the launcher reads them.
states_of() { "$tool" status "$1" || fail "slurm_tool status $1 failed"; }
# in_state ARRAY_JOB INDEX STATE
in_state() { [[ "$(states_of "$1" | awk -v i="$2" '$1 == i {print $3}')" == "$3" ]]; }
# No task of array job $1 pending, running or being requeued.
array_done() {
  local states
  states=$(states_of "$1")
  [[ -n "$states" ]] && ! grep -qE 'PENDING|RUNNING|COMPLETING|CONFIGURING|REQUEUE' <<<"$states"
}
# A requeued task waits for a begin time about two minutes ahead, Slurm's own delay, which also lets
# the node finish the old attempt: starting it again while slurmd still cleans up the previous one
# makes the new attempt fail at once (seen here: exit 1 within 2 ms). So: wait for the old altgrad
# to be gone and give the node two seconds, then start the task now.
start_now() {  # start_now ARRAY_JOB INDEX OLD_ALTGRAD_PID
  wait_until 30 "task $1_$2 to be pending again" in_state "$1" "$2" PENDING
  wait_until 30 "the old attempt of $1_$2 to exit" eval "! kill -0 $3 2>/dev/null"
  sleep 2
  scontrol update JobId="$1_$2" StartTime=now
}

python3 - "$work/corpus.txt" <<'PY'
import random, sys
r = random.Random(7)
words = ["the", "court", "shall", "decide", "on", "appeal", "of", "a", "party", "within", "article"]
open(sys.argv[1], "w").write(" ".join(r.choice(words) for _ in range(30000)))
PY

# configs/tiny.toml with this run's seed, length and data; written where the sweep puts a run's config.
write_config() {  # write_config DIR SEED STEPS
  mkdir -p "$1"
  { grep -vE '^(max_iters|lr_decay_iters|checkpoint_interval|keep_checkpoints|out_dir) ' "$root/configs/tiny.toml"
    printf 'seed = %s\nmax_iters = %s\nlr_decay_iters = %s\ncheckpoint_interval = 200\nkeep_checkpoints = 0\ndata = "%s"\n' \
      "$2" "$3" "$3" "$work/corpus.txt"; } >"$1/config.toml"
}
names=(short cancelled requeued warned)
seeds=(1 2 3 4)
steps=(40 $long_steps $long_steps $long_steps)
for i in "${!names[@]}"; do
  write_config "$sweep/runs/${names[$i]}" "${seeds[$i]}" "${steps[$i]}"
  write_config "$work/reference/${names[$i]}" "${seeds[$i]}" "${steps[$i]}"
done
# %1: one task at a time, so that each can be caught mid-run in turn.
"$tool" write "$sweep" "$altgrad" 1 "${names[@]}" || fail "slurm_tool could not write the script"
# Held, as a user may edit the script: no task starts before the test releases it.
sed -i 's/^#SBATCH --requeue$/&\n#SBATCH --hold/' "$sweep/slurm/sweep.sbatch"
grep -qx '#SBATCH --hold' "$sweep/slurm/sweep.sbatch" || fail "the script has no #SBATCH --requeue line to hold after"

# The references, straight through outside Slurm, while the cluster works (one thread each, as
# the tasks have: the bits do not depend on it, docs/determinism.md).
(for name in "${names[@]}"; do
   OMP_NUM_THREADS=1 "$altgrad" train "$work/reference/$name/config.toml" --out "$work/reference/$name" >/dev/null 2>&1 ||
     echo "reference run $name failed" >"$work/reference.failed"
 done) &
reference_pid=$!

job=$("$tool" submit "$sweep/slurm/sweep.sbatch") || fail "sbatch refused the generated script"
echo "submitted array job $job"

scontrol release "${job}_1"
pid=$(pause_mid_run "$sweep/runs/cancelled" "$long_steps")
"$tool" cancel "${job}_1"
sleep 0.5
kill -CONT "$pid" 2>/dev/null || true
wait_until 30 "task ${job}_1 to be cancelled" in_state "$job" 1 CANCELLED
[[ "$(last_end "$sweep/runs/cancelled")" == *'"interrupted":true'* ]] || fail "the cancelled run did not end interrupted: $(last_end "$sweep/runs/cancelled")"
echo "cancelled ${job}_1 after step $(logged_steps "$sweep/runs/cancelled"): checkpointed"

scontrol release "${job}_2"
requeued_pid=$(pause_mid_run "$sweep/runs/requeued" "$long_steps")
scontrol requeue "${job}_2"
sleep 0.5
kill -CONT "$requeued_pid" 2>/dev/null || true
echo "requeued ${job}_2 after step $(logged_steps "$sweep/runs/requeued")"

# Released, task 3 starts as soon as task 2 is requeued (a pending task does not count against %1).
scontrol release "${job}_3"
warned_pid=$(pause_mid_run "$sweep/runs/warned" "$long_steps")
scancel --batch --signal=USR1 "${job}_3"
sleep 0.5
kill -CONT "$warned_pid" 2>/dev/null || true
echo "warned ${job}_3 of its time limit after step $(logged_steps "$sweep/runs/warned"); it requeues itself"
start_now "$job" 2 "$requeued_pid"
start_now "$job" 3 "$warned_pid"
scontrol release "${job}_0"

wait_until 120 "array job $job to finish" array_done "$job"
# What squeue still holds (without accounting, Slurm 22.05 forgets some finished array tasks early,
# cancelled ones especially): every task it lists has ended as it should.
states_of "$job" | awk -v job="$job" '$2 != job "_" $1 || !($3 == "COMPLETED" || ($1 == 1 && $3 == "CANCELLED")) {bad = 1}
                                      END {exit bad}' || fail "task states after the array: $(states_of "$job")"
for name in short requeued warned; do
  [[ "$(last_end "$sweep/runs/$name")" == *'"reason":"completed"'* ]] || fail "run $name did not complete: $(last_end "$sweep/runs/$name")"
done
grep -q "restart 1" "$sweep"/slurm/"${job}"_2.out || fail "task ${job}_2 never restarted after its requeue"
grep -q "requeueing task 3" "$sweep"/slurm/"${job}"_3.out || fail "task ${job}_3 did not requeue itself after USR1"

# Submitted again, as a user would after fixing whatever stopped a run: only the cancelled run trains.
short_before=$(tree_sum "$sweep/runs/short")
again=$("$tool" submit "$sweep/slurm/sweep.sbatch") || fail "sbatch refused the script the second time"
scontrol release "$again"
wait_until 120 "array job $again to finish" array_done "$again"
[[ "$(tree_sum "$sweep/runs/short")" == "$short_before" ]] || fail "the finished run short was touched by the resubmission"
grep -q "has finished, nothing to do" "$sweep/slurm/${again}_0.out" || fail "task ${again}_0 did not see that short had finished"
[[ "$(last_end "$sweep/runs/cancelled")" == *'"reason":"completed"'* ]] || fail "the cancelled run did not complete on resubmission: $(last_end "$sweep/runs/cancelled")"

# Continued, not started over (which would end with the same bits): each interrupted run logged a
# resume from the step its interruption checkpointed.
for name in cancelled requeued warned; do
  stopped=$(grep '"interrupted":true' "$sweep/runs/$name/events.jsonl" | grep '"event":"end"' | head -n 1 |
            sed -n 's/.*"step":\([0-9]*\).*/\1/p' || true)
  [[ -n "$stopped" ]] || fail "run $name has no interrupted end event"
  grep -q "\"event\":\"resume\".*\"step\":$stopped[,}]" "$sweep/runs/$name/events.jsonl" ||
    fail "run $name did not resume from step $stopped, where it was interrupted"
done

wait "$reference_pid"
[[ ! -e "$work/reference.failed" ]] || fail "$(cat "$work/reference.failed")"
for i in "${!names[@]}"; do
  name=${names[$i]}
  final=checkpoints/step_${steps[$i]}
  [[ "$(tree_sum "$sweep/runs/$name/$final")" == "$(tree_sum "$work/reference/$name/$final")" ]] ||
    fail "run $name: $final differs from the same run trained straight through"
  python3 - "$sweep/runs/$name/metrics.jsonl" "$work/reference/$name/metrics.jsonl" <<'PY' ||
import json, sys
a, b = ([{k: v for k, v in json.loads(l).items() if k != "tokens_per_s"} for l in open(p)] for p in sys.argv[1:])
sys.exit(0 if a == b else 1)
PY
    fail "run $name: metrics.jsonl differs from the same run trained straight through"
done
echo "ok: 4-task array on Slurm; scancel + resubmission, scontrol requeue and the time-limit warning all resumed byte-identical to straight runs; the finished run was not rerun"
