"""The speed tables of scripts/gpu_check.sh, on one GPU, for the research notes' shapes (docs/cuda.md,
"Speed"). Both time the engine and PyTorch's nanoGPT-equivalent model (bench/torch_gpu_pass.py) in
the same run and print Markdown tables with ratios.

Training steps (the default): the engine's real runs on the GPU, recipe by recipe (`altgrad bench
train --device cuda`: bf16, fp32, fp8-hybrid, mx8), beside PyTorch's training steps with AdamW
under BF16 autocast, eager and compiled, and with the notes' fake quantization, compiled; then the
issue's targets as ratios.
Passes (--passes): the engine's FP32 forward and backward pass (bench/cuda_pass_bench.cpp) beside
PyTorch's in FP32, BF16 and BF16 compiled.

Usage: gpu_speed_table.py PATH_TO_altgrad
       gpu_speed_table.py --passes PATH_TO_cuda_pass_bench"""
import json
import os
import subprocess
import sys

# (name, n_layer, n_head, n_embd, block_size, batch_size, timed steps of a pass, steps of a real run)
SHAPES = [
    ("default (0.84M)", 4, 4, 128, 128, 16, 50, 20),
    ("10.8M", 6, 6, 384, 256, 64, 20, 10),
    ("48M", 12, 9, 576, 512, 32, 10, 6),
]
TORCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_gpu_pass.py")
RECIPES = ("bf16", "fp32", "fp8-hybrid", "mx8")
TORCH_TRAIN_MODES = ("bf16", "bf16-compile", "fake-quant-compile")


def torch_arguments(shape, steps):
    _, layers, heads, channels, T, B = shape[:6]
    return ["--n_layer", str(layers), "--n_head", str(heads), "--n_embd", str(channels), "--block_size", str(T),
            "--batch_size", str(B), "--steps", str(steps)]


def engine_arguments(shape):
    _, layers, heads, channels, T, B = shape[:6]
    settings = dict(n_layer=layers, n_head=heads, n_embd=channels, block_size=T, batch_size=B)
    return [argument for key, value in settings.items() for argument in ("--set", f"{key}={value}")]


def run_json_lines(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")], None


def kilo(rate):
    return f"{rate / 1e3:,.0f}k"


def peak(mib):
    return "" if mib is None else f" ({mib:,.0f} MiB)"


def training_table(altgrad):
    print("| shape | " + " | ".join(f"engine {r}" for r in RECIPES) + " | " +
          " | ".join(f"PyTorch {m}" for m in TORCH_TRAIN_MODES) + " |")
    print("|---" * (1 + len(RECIPES) + len(TORCH_TRAIN_MODES)) + "|")
    targets = []
    failed = False
    for shape in SHAPES:
        mine, error = run_json_lines([altgrad, "bench", "train", "--device", "cuda", "--steps", str(shape[7])] +
                                     engine_arguments(shape))
        if mine is None:
            print(f"| {shape[0]} | engine failed: {error} |")
            failed = True
            continue
        theirs, torch_error = run_json_lines([sys.executable, TORCH, "--train", "--modes", ",".join(TORCH_TRAIN_MODES)] +
                                             torch_arguments(shape, shape[6]))
        engine = {r["recipe"]: r for r in mine}
        cells = [kilo(engine[r]["tokens_per_s"]) + peak(engine[r]["peak_device_mib"]) for r in RECIPES]
        torch = {r["mode"]: r for r in theirs} if theirs else {}
        cells += [kilo(torch[m]["tokens_per_s"]) + peak(torch[m]["peak_mib"]) if m in torch
                  else f"failed: {torch_error}" for m in TORCH_TRAIN_MODES]
        print(f"| {shape[0]} | " + " | ".join(cells) + " |", flush=True)
        if torch:
            bf16 = engine["bf16"]["tokens_per_s"]
            fastest_bf16 = max(torch["bf16"]["tokens_per_s"], torch["bf16-compile"]["tokens_per_s"])
            compiled_fake = torch["fake-quant-compile"]["tokens_per_s"]
            line = f"{shape[0]}: bf16 / PyTorch's faster bf16 {bf16 / fastest_bf16:.2f}x"
            for r in ("fp8-hybrid", "mx8"):
                rate = engine[r]["tokens_per_s"]
                line += f"; {r} / bf16 {rate / bf16:.2f}x, / PyTorch fake-quant compiled {rate / compiled_fake:.2f}x"
            targets.append(line)
    print()
    print("Targets (issue 47): bf16 >= 1.00x PyTorch's faster bf16 at 10.8M and 48M; fp8-hybrid and mx8 >= 0.87x")
    print("bf16 (within 15%) and > 1x PyTorch's compiled fake quantization; every recipe >= 1.2x it at the default.")
    for line in targets:
        print(line)
    return 1 if failed else 0


def passes_table(engine_binary):
    print("| shape | engine fp32 | PyTorch fp32 | PyTorch bf16 | PyTorch bf16 + compile | PyTorch peak MiB (bf16) |")
    print("|---|---|---|---|---|---|")
    failed = False
    for shape in SHAPES:
        mine, error = run_json_lines([engine_binary] + torch_arguments(shape, shape[6]))
        if mine is None:
            print(f"| {shape[0]} | failed: {error} | | | | |")
            failed = True
            continue
        rate = mine[0]["tokens_per_s"]
        theirs, torch_error = run_json_lines([sys.executable, TORCH] + torch_arguments(shape, shape[6]))
        cells = [f"{kilo(rate)} tok/s"]
        if theirs is None:
            cells += [f"PyTorch failed: {torch_error}", "", "", ""]
        else:
            by_mode = {r["mode"]: r for r in theirs}
            for mode in ("fp32", "bf16", "bf16-compile"):
                t = by_mode[mode]["tokens_per_s"]
                cells.append(f"{kilo(t)} (engine {rate / t:.2f}x)")
            cells.append(f"{by_mode['bf16']['peak_mib']:,.0f}")
        print(f"| {shape[0]} | " + " | ".join(cells) + " |", flush=True)
    return 1 if failed else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--passes":
        return passes_table(sys.argv[2])
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    return training_table(sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
