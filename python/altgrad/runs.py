"""Run and sweep directories from Python: metrics, events, the resolved config, checkpoints.

Tables are pandas DataFrames where pandas is installed (Debian's python3-pandas) and lists of dicts
otherwise. A metrics line's nested records are flattened to columns named by their TensorBoard
paths, the same names the report and `summary.csv` use: `quant/h.0.attn.c_attn:act/amax`.
"""
import csv
import json
import pathlib
import struct
import tomllib
from dataclasses import dataclass

import numpy as np

from ._core import Format

try:
    import pandas as _pandas
except ImportError:  # plain lists of dicts
    _pandas = None


@dataclass
class Run:
    """One run directory: its resolved config.toml, metrics.jsonl and events.jsonl."""
    dir: pathlib.Path
    config: dict
    metrics: object  # DataFrame, or list of flattened dicts
    events: object   # DataFrame, or list of dicts


@dataclass
class Sweep:
    """One sweep directory: index.json, the report's summary.csv (when written) and every run."""
    dir: pathlib.Path
    index: dict
    summary: object  # DataFrame, list of dicts, or None before `altgrad report`
    runs: dict       # run name -> Run, for the runs that have started


def _flatten(record, prefix="", out=None):
    out = {} if out is None else out
    for key, value in record.items():
        name = f"{prefix}/{key}" if prefix else key
        if isinstance(value, dict):
            _flatten(value, name, out)
        else:
            out[name] = value
    return out


def _table(rows):
    return _pandas.DataFrame(rows) if _pandas is not None else rows


def _jsonl(path):
    rows = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{number}: not a JSON line ({e.msg})") from None
    return rows


def _directory(path, what, marker):
    path = pathlib.Path(path)
    if not (path / marker).is_file():
        raise FileNotFoundError(f"{path} is not {what} (no {marker})")
    return path


def read_run(path):
    """The run directory at `path` (FileNotFoundError when it holds no config.toml)."""
    path = _directory(path, "a run directory", "config.toml")
    with open(path / "config.toml", "rb") as f:
        config = tomllib.load(f)
    metrics = [_flatten(m) for m in _jsonl(path / "metrics.jsonl")] if (path / "metrics.jsonl").exists() else []
    events = _jsonl(path / "events.jsonl") if (path / "events.jsonl").exists() else []
    return Run(path, config, _table(metrics), _table(events))


def read_sweep(path):
    """The sweep directory at `path` (FileNotFoundError when it holds no index.json)."""
    path = _directory(path, "a sweep directory", "index.json")
    index = json.loads((path / "index.json").read_text())
    summary = None
    if (path / "summary.csv").exists():
        with open(path / "summary.csv", newline="") as f:
            summary = _pandas.read_csv(f) if _pandas is not None else list(csv.DictReader(f))
    runs = {r["name"]: read_run(path / r["dir"]) for r in index["runs"] if (path / r["dir"] / "config.toml").exists()}
    return Sweep(path, index, summary, runs)


_DTYPES = {"F32": np.float32, "U8": np.uint8, "U16": np.uint16}


def _read_safetensors(path):
    data = pathlib.Path(path).read_bytes()
    if len(data) < 8:
        raise ValueError(f"{path}: truncated (no header length)")
    (length,) = struct.unpack("<Q", data[:8])
    if 8 + length > len(data):
        raise ValueError(f"{path}: truncated (header of {length} bytes in a file of {len(data)})")
    header = json.loads(data[8:8 + length])
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        if entry["dtype"] not in _DTYPES or 8 + length + end > len(data):
            raise ValueError(f"{path}: tensor '{name}' has dtype {entry['dtype']} or lies beyond the file")
        tensors[name] = np.frombuffer(data[8 + length + begin:8 + length + end],
                                      dtype=_DTYPES[entry["dtype"]]).reshape(entry["shape"]).copy()
    return tensors, metadata


def _checkpoint_dir(path):
    path = pathlib.Path(path)
    if (path / "model.safetensors").exists():
        return path
    steps = sorted((int(p.name[len("step_"):]), p) for p in (path / "checkpoints").glob("step_*")
                   if p.name[len("step_"):].isdigit() and (p / "model.safetensors").exists())
    if not steps:
        raise FileNotFoundError(f"{path}: neither a checkpoint (no model.safetensors) nor a run directory with checkpoints")
    return steps[-1][1]


def load_checkpoint(path, as_torch=False):
    """The model of a checkpoint (or of a run directory's latest) as a state_dict under nanoGPT's
    names: numpy float32 arrays, or torch tensors with as_torch=True. Weights kept as codes
    (code-only runs) are decoded: value = decode(code) / scale, as the engine reads them."""
    tensors, metadata = _read_safetensors(_checkpoint_dir(path) / "model.safetensors")
    state = {}
    for name, array in tensors.items():
        if name.endswith(".scale") and name[:-len(".scale")] + ".codes" in tensors:
            continue
        if name.endswith(".codes"):
            base = name[:-len(".codes")]
            values = Format(metadata[base + ".format"]).decode(array.astype(np.int64))
            state[base] = values / tensors[base + ".scale"].reshape(())
        else:
            state[name] = array
    if as_torch:
        import torch
        return {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in state.items()}
    return state
