"""read_run, read_sweep and load_checkpoint against the files of a real tiny sweep and what the
engine itself exports (`altgrad export` decodes code-only weights its own way)."""
import json
import pathlib
import random
import struct
import subprocess

import numpy as np
import pytest

import altgrad

ROOT = pathlib.Path(__file__).resolve().parents[2]


def read_f32_safetensors(path):
    data = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    return {k: np.frombuffer(data[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]], np.float32).reshape(v["shape"])
            for k, v in header.items()}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, altgrad_cli):
    work = tmp_path_factory.mktemp("sweep")
    r = random.Random(1)
    (work / "corpus.txt").write_text(" ".join(r.choice(["law", "court", "article", "shall"]) for _ in range(6000)))
    (work / "tiny.toml").write_text((ROOT / "configs" / "tiny.toml").read_text() + f'\ndata = "{work}/corpus.txt"\n')
    (work / "sweep.toml").write_text('base = "tiny.toml"\n\n[set]\nmax_iters = 10\nlr_decay_iters = 10\n'
                                     'checkpoint_interval = 10\neval_interval = 5\n\n[axes]\nseed = [1, 2]\n')
    subprocess.run([altgrad_cli, "sweep", str(work / "sweep.toml"), "--jobs", "2", "--out", str(work / "s")],
                   check=True, capture_output=True)
    subprocess.run([altgrad_cli, "report", str(work / "s")], check=True, capture_output=True)
    return work / "s"


def test_read_sweep_holds_the_index_summary_and_runs(sweep):
    s = altgrad.read_sweep(sweep)
    assert s.index == json.loads((sweep / "index.json").read_text())
    assert sorted(s.runs) == sorted(r["name"] for r in s.index["runs"])
    assert sorted(s.summary["run"]) == sorted(s.runs)


def test_read_run_flattens_metrics_to_the_reports_column_names(sweep):
    name = altgrad.read_sweep(sweep).index["runs"][0]["dir"]
    run = altgrad.read_run(sweep / name)
    lines = [json.loads(l) for l in open(sweep / name / "metrics.jsonl")]
    assert list(run.metrics["step"]) == [m["step"] for m in lines]
    assert list(run.metrics["loss"]) == [m["loss"] for m in lines]
    diag = next(m for m in lines if "diag" in m)
    tensor, value = next(iter(diag["diag"]["grad_snr_db"].items()))
    column = run.metrics[f"diag/grad_snr_db/{tensor}"]
    assert column[run.metrics["step"] == diag["step"]].item() == value
    assert run.config["max_iters"] == 10
    assert list(run.events["event"])[0] == "start"


def test_load_checkpoint_equals_the_engines_export(sweep, altgrad_cli, tmp_path):
    run = sweep / altgrad.read_sweep(sweep).index["runs"][0]["dir"]
    subprocess.run([altgrad_cli, "export", "--checkpoint", str(run), "--out", str(tmp_path / "e")], check=True,
                   capture_output=True)
    exported = read_f32_safetensors(tmp_path / "e" / "model.safetensors")
    state = altgrad.load_checkpoint(run)
    assert set(state) <= set(exported) and all(np.array_equal(state[k], exported[k]) for k in state)


def test_load_checkpoint_decodes_code_only_weights(tmp_path, altgrad_cli):
    r = random.Random(2)
    (tmp_path / "corpus.txt").write_text(" ".join(r.choice(["law", "court", "state"]) for _ in range(6000)))
    (tmp_path / "codes.toml").write_text((ROOT / "configs" / "tiny.toml").read_text() +
                                         f'\ndata = "{tmp_path}/corpus.txt"\noptimizer = "gridwalk"\n'
                                         'master_weights = false\n[quant]\npreset = "fp8-hybrid"\n')
    subprocess.run([altgrad_cli, "train", str(tmp_path / "codes.toml"), "--out", str(tmp_path / "run"),
                    "--set", "max_iters=5", "--set", "checkpoint_interval=5"], check=True, capture_output=True)
    subprocess.run([altgrad_cli, "export", "--checkpoint", str(tmp_path / "run"), "--out", str(tmp_path / "e")],
                   check=True, capture_output=True)
    exported = read_f32_safetensors(tmp_path / "e" / "model.safetensors")
    state = altgrad.load_checkpoint(tmp_path / "run", as_torch=True)
    checkpoint = sorted((tmp_path / "run" / "checkpoints").glob("step_*"))[-1] / "model.safetensors"
    data = checkpoint.read_bytes()
    stored = json.loads(data[8:8 + struct.unpack("<Q", data[:8])[0]])
    assert "transformer.h.0.mlp.c_fc.weight.codes" in stored  # the run kept its weights as codes
    assert set(state) == set(exported) and all(np.array_equal(state[k].numpy(), exported[k]) for k in state)


def test_missing_directories_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"{tmp_path}/nope is not a run directory"):
        altgrad.read_run(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="not a sweep directory"):
        altgrad.read_sweep(tmp_path)
