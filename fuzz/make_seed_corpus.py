#!/usr/bin/env python3
"""Writes fuzz/corpus/<target>/: files AltGrad wrote, plus hand-made edge cases.

Usage: fuzz/make_seed_corpus.py RUN_DIR [RUN_DIR ...]
The run directories come from `altgrad train` (fuzz/seed_runs/ holds the configs that made the
committed seeds run0 to run3: fp8_adamw.toml, sgd_swiglu.toml, madam_e7m0.toml, gridwalk_codes.toml). Multi-file inputs use fuzz_support.hpp's layout:
"@@ name\\n<bytes>\\n"... scripts/fuzz.sh never writes here: libFuzzer adds what it finds to
build-fuzz/fuzz-corpus/<target>/.
"""
import json
import re
import pathlib
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"


def put(target, name, data):
    folder = ROOT / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def files(sections):
    return b"".join(b"@@ " + name.encode() + b"\n" + data + b"\n" for name, data in sections)


def safetensors(header, payload=b""):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + payload


def record_payloads(data):
    """The data of each TFRecord in an event file (the CRCs are not checked here)."""
    payloads, at = [], 0
    while at + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        payloads.append(data[at + 12:at + 12 + length])
        at += 12 + length + 4
    return payloads


def checkpoint_seeds(runs, first=0):
    for i, run in enumerate(runs, first):
        for step_dir in sorted((run / "checkpoints").iterdir()):
            sections = [(p.name, p.read_bytes()) for p in sorted(step_dir.iterdir())]
            put("checkpoint", f"run{i}_{step_dir.name}", files(sections))
            for name, data in sections:
                if name.endswith(".safetensors"):
                    put("safetensors", f"run{i}_{step_dir.name}_{name}", data)
        put("config", f"run{i}_config.toml", (run / "config.toml").read_bytes())
        for events in run.glob("events.out.tfevents.*"):
            data = events.read_bytes()
            put("tensorboard", f"run{i}_events", b"\x00" + data[:4096])
            put("tensorboard", f"run{i}_payloads", b"\x01" + files(
                [(f"e{k}", payload) for k, payload in enumerate(record_payloads(data)[:8])]))
        put("corpus", f"run{i}_metrics_jsonl", b"\x01" + (run / "metrics.jsonl").read_bytes()[:2048])


def edge_cases():
    put("safetensors", "empty_header", safetensors({}))
    put("safetensors", "metadata_only", safetensors({"__metadata__": {"format": "pt"}}))
    put("safetensors", "zero_dim", safetensors({"t": {"dtype": "F32", "shape": [0, 3], "data_offsets": [0, 0]}}))
    put("safetensors", "scalar", safetensors({"t": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}}, b"\0\0\x80\x3f"))
    put("safetensors", "huge_shape", safetensors({"t": {"dtype": "F32", "shape": [4611686018427387904, 4, 0],
                                                         "data_offsets": [0, 0]}}))
    put("safetensors", "bad_dtype", safetensors({"t": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}}, b"\0\0"))
    put("safetensors", "truncated", struct.pack("<Q", 1000) + b"{}")
    put("config", "empty", "")
    put("config", "overrides", files([("config.toml", b"n_layer = 2\n[quant]\npreset = \"mx8\"\n"),
                                      ("set", b"n_head=2\nlearning_rate=.001\nout_dir=runs/a\nbias=true\nnorm=rmsnorm")]))
    put("config", "quant_tables", b'n_layer = 1\n[quant]\npreset = "fp8-hybrid"\nseed = 3\n[quant.grad]\n'
                                  b'rounding = "stochastic"\n[[quant.override]]\nmatch = "h.*.attn.probs"\nformat = "e1m6"\n'
                                  b'enabled = true\nscaling = "delayed"\nhistory = 4\nmargin = 1\n')
    put("config", "gemm_overrides", b'n_layer = 1\n[quant]\npreset = "te-current"\n[[quant.override]]\nmatch = "*"\n'
                                    b'gemm = "wgrad"\nenabled = false\n[[quant.override]]\nmatch = "*:weight"\n'
                                    b'gemm = "dgrad"\nformat = "e2m1"\nscaling = "block"\n')
    put("config", "unknown_key", "n_layr = 3\n")
    put("config", "bad_set", files([("set", b"n_head=5\nmax_iters=1e30\nseed=-1\nquant.seed=1")]))
    for i, name in enumerate(["e4m3", "e5m2fnuz,bias=16", "e8m0fnu", "e2m1,subnormals=off,overflow=inf", "bf16",
                              "e3m4", "e7m0", "e1m6fn", "e4m3fn,policy=finite", "e99m99", "", "e4m3,bias=-2147483648"]):
        put("format_name", f"name{i}", name)
    put("quantize_tokens", "numbers", "e4m3\n1 -2.5 +3 nan inf -inf 1e999 -1e-999 448 449 0.001953125\n")
    put("quantize_tokens", "bad_tokens", "e5m2fnuz\n1e999abc +-5 0x10 1.5e .5 5. infinity nan(1)\n")
    put("quantize_tokens", "subnormal_edges", "e8m0fnu\n7.006492e-46 1.1754942e-38 3.4028235e38 3.4028236e38\n")
    put("corpus", "text", b"\x00Hello, world.\nSecond line \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\n")
    put("corpus", "bad_utf8", b"\x00ok \xe0\x80\x80 \xed\xa0\x80 \xf4\x90\x80\x80 \xc3")
    put("corpus", "jsonl", b'\x01{"text": "one"}\n\n{"text": "two \\u00e9", "id": 3}\n{"text": "\\ud83d\\ude00"}\n')
    put("corpus", "jsonl_bad", b'\x01{"text": 3}\n[1]\n{"body": "x"}\n{"text": "\\ud800"}\n')
    put("corpus", "folder", b"\x02" + files([("a.txt", b"first"), ("sub/b.txt", b"second"), ("c.md", b"skipped"),
                                              ("sub/deeper/d.txt", b"")]))
    put("tensorboard", "framed_empty_event", b"\x01" + files([("e0", b"")]))
    put("tensorboard", "truncated", b"\x00" + struct.pack("<Q", 100) + b"\0\0\0\0")


def checkpoint_regressions(step_dir):
    """Checkpoints cut to the files a finding needs (the target reads config, state, recipe first)."""
    config = (step_dir / "config.json").read_bytes()
    state = (step_dir / "state.json").read_bytes()
    recipe = (step_dir / "recipe.json").read_bytes()
    # Numbers read as integers with a plain cast: 1e300 as size_t is undefined behaviour.
    put("checkpoint", "regress_float_n_layer", files([("config.json", re.sub(rb'"n_layer": \d+', b'"n_layer": 1e300', config))]))
    put("checkpoint", "regress_recipe_float_history", files([
        ("config.json", config), ("state.json", state),
        ("recipe.json", re.sub(rb'"history": \d+', b'"history": 1e300', recipe, count=1))]))
    # No mlp_hidden (the default width): the re-saved config states the width; the same model.
    put("checkpoint", "regress_config_without_mlp_hidden", files(
        [(p.name, re.sub(rb',\s*"mlp_hidden": \d+', b'', p.read_bytes()) if p.name == "config.json" else p.read_bytes())
         for p in sorted(step_dir.iterdir())]))
    # state.json values the trainer cannot resume from were accepted.
    put("checkpoint", "regress_negative_step", files([("config.json", config),
                                                      ("state.json", re.sub(rb'"step": \d+', b'"step": -3', state))]))
    put("checkpoint", "regress_negative_grad_norm", files([
        ("config.json", config), ("state.json", state.replace(b'"grad_norm_history": [', b'"grad_norm_history": [-1.0,'))]))


def regression_inputs():
    """Minimized inputs of findings, each fixed in the reader it names."""
    # write_safetensors wrote the header "null" for no tensors and no metadata, which it then refused.
    put("safetensors", "regress_empty_roundtrip", safetensors({}))
    # memcpy from the null data of a file with no data bytes, for a zero-element tensor.
    put("safetensors", "regress_zero_elements_no_data", safetensors({"t": {"dtype": "F32", "shape": [0],
                                                                           "data_offsets": [0, 0]}}))
    # The element count of a shape overflowed int64 before the size check.
    put("safetensors", "regress_shape_overflow", safetensors({"t": {"dtype": "F32", "shape": [4611686018427387904, 4, 0],
                                                                    "data_offsets": [0, 0]}}))
    # A number past double's range: nlohmann threw out_of_range, which only parse_error was caught for.
    text = b'{"n":4444444e444}'
    put("safetensors", "regress_number_overflow", struct.pack("<Q", len(text)) + text)
    put("corpus", "regress_jsonl_number_overflow", b'\x01{"text": "a", "n": 1e999}\n')
    # Harness: a folder entry named "x/." was written as a file and failed; such names are skipped.
    put("corpus", "regress_folder_dot_name", b"\x02" + files([("a.txt", b"first"), ("sub/.", b"dot")]))
    # Harness: a folder entry with a name over 255 bytes could not be written and failed; such names are skipped.
    put("corpus", "regress_folder_name_too_long", b"\x02" + files([("a.txt", b"first"), ("sub/" + "b" * 256, b"long")]))
    # bias = INT_MIN overflowed int in validation_error.
    put("format_name", "regress_bias_int_min", "e4m3,bias=-2147483648")
    # A NUL byte in a name cut the error message short at the quote.
    put("format_name", "regress_nul_in_name", b"e4m3,bias=\x00")
    # A grid whose finest step is float32's (2^-149) shifted by -1 when rounding a value there.
    put("format_name", "regress_step_2_pow_minus_149", "e1m1fnuz,bias=149")
    # "1e999abc" and "+-5" were accepted as numbers.
    put("quantize_tokens", "regress_trailing_after_overflow", "e4m3\n1e999abc\n")
    put("quantize_tokens", "regress_plus_minus", "e4m3\n+-5\n")
    # A histogram with one edge and no count was returned as read (Event{step 1, summary{value{tag "h",
    # histo{bucket_limit [1.0]}}}}, framed by the target).
    histo = b"\x32\x08" + struct.pack("<d", 1.0)
    value = b"\x0a\x01h\x2a" + bytes([len(histo)]) + histo
    summary = b"\x0a" + bytes([len(value)]) + value
    put("tensorboard", "regress_histogram_without_counts",
        b"\x01" + files([("e0", b"\x10\x01\x2a" + bytes([len(summary)]) + summary)]))
    # A --set value that is not UTF-8 was kept, and config_to_toml wrote a file TOML refuses.
    put("config", "regress_set_not_utf8", files([("set", b"out_dir=\xb3")]))


def main():
    runs = [pathlib.Path(p) for p in sys.argv[1:]]
    checkpoint_seeds(runs)
    edge_cases()
    regression_inputs()
    checkpoint_regressions(runs[0] / "checkpoints" / "step_2")


if __name__ == "__main__":
    main()
