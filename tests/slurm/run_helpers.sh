# Shared by the Slurm tests (sourced): waiting, finding and pausing a training run, reading its logs.
# The sourcing script defines `fail MESSAGE` (report and exit) and may set `poll` (seconds).

# wait_until SECONDS WHAT COMMAND...: runs COMMAND until it succeeds, or fails naming WHAT.
wait_until() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    ((SECONDS < deadline)) || fail "timed out after ${seconds}s waiting for $what"
    sleep "${poll:-0.1}"
  done
}

# The altgrad process training RUN_DIR (its command line ends with --out RUN_DIR), or nothing. Bash
# builtins only: a run on an idle machine can finish in the time a /proc scan forking per pid takes.
altgrad_pid() {
  local proc args
  for proc in /proc/[0-9]*; do
    { mapfile -d '' -t args <"$proc/cmdline"; } 2>/dev/null || continue
    ((${#args[@]} >= 3)) || continue
    [[ "${args[1]}" == train && "${args[-2]}" == --out && "${args[-1]}" == "$1" ]] && { echo "${proc#/proc/}"; return; }
  done
}

logged_steps() { [[ -f "$1/metrics.jsonl" ]] && wc -l <"$1/metrics.jsonl" || echo 0; }
last_end() { grep '"event":"end"' "$1/events.jsonl" 2>/dev/null | tail -n 1 || true; }
tree_sum() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
metrics_without_speed() {
  python3 -c 'import json, sys; print([{k: v for k, v in json.loads(l).items() if k != "tokens_per_s"} for l in open(sys.argv[1])])' "$1"
}

# pause_mid_run RUN_DIR MAX_ITERS: pauses (SIGSTOP) the run training RUN_DIR once it has logged 20
# steps and before it has ended; prints its pid. The pid is found first, while the run starts, so
# that pausing it takes one poll, not a scan.
pause_mid_run() {
  local run_dir=$1 max_iters=$2 pid=
  poll=0.01 wait_until 90 "run $run_dir to start" eval 'pid=$(altgrad_pid "$run_dir"); [[ -n "$pid" ]]'
  poll=0.005 wait_until 90 "run $run_dir to be mid-run" eval '(($(logged_steps "$run_dir") >= 20))'
  kill -STOP "$pid" 2>/dev/null || fail "run $run_dir ended before it could be paused mid-run"
  (($(logged_steps "$run_dir") < max_iters)) || fail "run $run_dir ended before it could be paused mid-run"
  echo "$pid"
}
