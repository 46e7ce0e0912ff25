"""Compares two run directories of the same config (scripts/compare_runs.sh): checkpoints byte for
byte, metrics.jsonl and events.jsonl without what the machine measures (wall-clock times, speed,
resident memory), with each run's own directory replaced by a placeholder. Prints one line per run, plus one per difference; exit status 1 when any differs.
Usage: compare_run_dirs.py BASELINE_RUN_DIR CANDIDATE_RUN_DIR"""
import collections
import json
import os
import sys

# Measured, not computed: they differ between any two runs. Matched on a key's last component.
MEASURED_KEYS = {"tokens_per_s", "train_seconds", "peak_rss_bytes"}


def flattened(record, prefix=""):
    """Nested objects as dotted keys, so that a difference names its leaf."""
    flat = {}
    for key, value in record.items():
        if isinstance(value, dict):
            flat.update(flattened(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def json_lines(path, run_dir):
    with open(path, encoding="utf-8") as f:
        text = f.read().replace(run_dir, "RUN_DIR")
    records = [json.loads(line) for line in text.splitlines() if line]
    return [{k: v for k, v in flattened(r).items() if k.rsplit(".", 1)[-1] not in MEASURED_KEYS} for r in records]


def checkpoint_files(run_dir):
    top = os.path.join(run_dir, "checkpoints")
    files = {}
    for folder, _, names in os.walk(top):
        for name in names:
            path = os.path.join(folder, name)
            files[os.path.relpath(path, top)] = path
    return files


def differences(baseline, candidate):
    for name in ("metrics.jsonl", "events.jsonl"):
        a = json_lines(os.path.join(baseline, name), baseline)
        b = json_lines(os.path.join(candidate, name), candidate)
        if len(a) != len(b):
            yield f"{name}: {len(a)} lines against {len(b)}"
            continue
        for line, (x, y) in enumerate(zip(a, b), start=1):
            for key in sorted(set(x) | set(y)):
                if x.get(key) != y.get(key):
                    yield f"{name}:{line}: {key}: {x.get(key)!r} against {y.get(key)!r}"
    a, b = checkpoint_files(baseline), checkpoint_files(candidate)
    for rel in sorted(set(a) ^ set(b)):
        yield f"checkpoints/{rel}: in one run only"
    for rel in sorted(set(a) & set(b)):
        with open(a[rel], "rb") as fa, open(b[rel], "rb") as fb:
            if fa.read() != fb.read():
                yield f"checkpoints/{rel}: bytes differ"


def main():
    baseline, candidate = sys.argv[1], sys.argv[2]
    found = list(differences(baseline, candidate))
    name = os.path.basename(baseline.rstrip("/"))
    files = len(checkpoint_files(baseline))
    print(f"{name}: {'identical' if not found else f'{len(found)} differences'} "
          f"(metrics, events, {files} checkpoint files)")
    for line in found[:10]:
        print(f"  {line[:200]}")
    if len(found) > 10:
        print(f"  by kind: {', '.join(f'{kind} ×{count}' for kind, count in kinds(found).most_common())}")
    return 1 if found else 0


def kinds(found):
    """What differs, for a long list: checkpoint files, or a metric's last name component
    (rel_error for every quantization point's relative error)."""
    return collections.Counter("checkpoint bytes" if line.startswith("checkpoints/")
                               else line.split(": ")[1].rsplit(".", 1)[-1] for line in found)


if __name__ == "__main__":
    sys.exit(main())
