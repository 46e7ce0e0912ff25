#!/usr/bin/env python3
"""SIGTERM checkpoints and stops `altgrad train`; `--resume` then ends bit-identical.

Slurm sends SIGTERM before a job's time limit, on scancel and on requeue. This trains a tiny model
once straight through, and once with a real SIGTERM sent mid-run (after at least 40 logged steps,
between the periodic checkpoints), and requires:
  - the signalled run exits with status 75 (interrupted), its events.jsonl ends with an end event
    marked "interrupted", and it wrote a checkpoint of the step it stopped after;
  - `altgrad train --resume` on it completes, and its final checkpoint (every file) is byte-identical
    to the straight run's, as are metrics.jsonl's lines with the wall-clock field taken out.

Usage: sigterm_resume_check.py PATH_TO_ALTGRAD
"""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEPS = 200
SETTINGS = [f"max_iters={STEPS}", f"lr_decay_iters={STEPS}", "checkpoint_interval=100", "keep_checkpoints=0"]


def fail(message):
    sys.exit(f"FAIL: {message}")


def train_command(altgrad, corpus, run_dir):
    sets = [arg for s in SETTINGS + [f'data="{corpus}"'] for arg in ("--set", s)]
    return [altgrad, "train", str(ROOT / "configs/tiny.toml"), *sets, "--out", str(run_dir)]


def metrics_without_timing(run_dir):
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    for line in lines:
        line.pop("tokens_per_s", None)
    return lines


def checkpoint_files(checkpoint):
    return {p.name: p.read_bytes() for p in sorted(checkpoint.iterdir()) if p.is_file()}


def logged_steps(run_dir):
    try:
        return len((run_dir / "metrics.jsonl").read_text().splitlines())
    except FileNotFoundError:
        return 0


def main():
    altgrad = sys.argv[1]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="altgrad_sigterm_") as tmp:
        tmp = Path(tmp)
        words = ["the", "court", "shall", "decide", "on", "appeal", "of", "a", "party", "within", "article"]
        r = random.Random(7)
        corpus = tmp / "corpus.txt"
        corpus.write_text(" ".join(r.choice(words) for _ in range(30000)))

        straight = tmp / "straight"
        done = subprocess.run(train_command(altgrad, corpus, straight), env=env, capture_output=True, text=True,
                              errors="replace")
        if done.returncode != 0:
            fail(f"the straight run exited {done.returncode}:\n{done.stderr}")

        split = tmp / "split"
        process = subprocess.Popen(train_command(altgrad, corpus, split), env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, errors="replace")
        deadline = time.monotonic() + 60
        while logged_steps(split) < 40 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        if process.poll() is not None:
            fail(f"the run ended (status {process.returncode}) before it could be signalled")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
        if process.returncode != 75:
            fail(f"after SIGTERM altgrad train exited {process.returncode}, not 75 (interrupted):\n{stderr}")
        end = json.loads((split / "events.jsonl").read_text().splitlines()[-1])
        if end.get("event") != "end" or end.get("interrupted") is not True:
            fail(f"events.jsonl's last line is not an interrupted end event: {end}")
        stopped_at = end["step"]
        if not 40 <= stopped_at < STEPS:
            fail(f"the run stopped after step {stopped_at}, not mid-run")
        if not (split / "checkpoints" / f"step_{stopped_at}" / "model.safetensors").is_file():
            fail(f"no checkpoint of step {stopped_at}, the step the run stopped after")

        resumed = subprocess.run([altgrad, "train", "--resume", str(split)], env=env, capture_output=True, text=True,
                                 errors="replace")
        if resumed.returncode != 0:
            fail(f"the resumed run exited {resumed.returncode}:\n{resumed.stderr}")
        final = f"checkpoints/step_{STEPS}"
        if checkpoint_files(split / final) != checkpoint_files(straight / final):
            fail(f"{final} differs between the interrupted-and-resumed run and the straight one")
        if metrics_without_timing(split) != metrics_without_timing(straight):
            fail("metrics.jsonl differs between the interrupted-and-resumed run and the straight one")
        print(f"ok: SIGTERM after step {stopped_at} of {STEPS}; exit 75; resumed run byte-identical "
              f"({len(checkpoint_files(split / final))} checkpoint files, {STEPS} metrics lines)")


if __name__ == "__main__":
    main()
