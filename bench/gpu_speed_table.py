"""The speed table of scripts/gpu_check.sh: for each of the research notes' shapes, the CUDA engine's
forward and backward pass (bench/cuda_pass_bench.cpp) beside PyTorch's on the same GPU in the same
run (bench/torch_gpu_pass.py: FP32 without TF32, BF16 autocast, BF16 autocast compiled), in tokens/s,
with the engine's rate as a ratio of each. Prints a Markdown table.
Usage: gpu_speed_table.py PATH_TO_cuda_pass_bench"""
import json
import os
import subprocess
import sys

# (name, n_layer, n_head, n_embd, block_size, batch_size, timed steps)
SHAPES = [
    ("default (0.84M)", 4, 4, 128, 128, 16, 50),
    ("10.8M", 6, 6, 384, 256, 64, 20),
    ("48M", 12, 9, 576, 512, 32, 10),
]
TORCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_gpu_pass.py")


def arguments(shape):
    _, layers, heads, channels, T, B, steps = shape
    return ["--n_layer", str(layers), "--n_head", str(heads), "--n_embd", str(channels), "--block_size", str(T),
            "--batch_size", str(B), "--steps", str(steps)]


def run_json_lines(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")], None


def main():
    engine = sys.argv[1]
    print("| shape | engine fp32 | PyTorch fp32 | PyTorch bf16 | PyTorch bf16 + compile | PyTorch peak MiB (bf16) |")
    print("|---|---|---|---|---|---|")
    failed = False
    for shape in SHAPES:
        mine, error = run_json_lines([engine] + arguments(shape))
        if mine is None:
            print(f"| {shape[0]} | failed: {error} | | | | |")
            failed = True
            continue
        rate = mine[0]["tokens_per_s"]
        theirs, torch_error = run_json_lines([sys.executable, TORCH] + arguments(shape))
        cells = [f"{rate / 1e3:,.0f}k tok/s"]
        if theirs is None:
            cells += [f"PyTorch failed: {torch_error}", "", "", ""]
        else:
            by_mode = {r["mode"]: r for r in theirs}
            for mode in ("fp32", "bf16", "bf16-compile"):
                t = by_mode[mode]["tokens_per_s"]
                cells.append(f"{t / 1e3:,.0f}k (engine {rate / t:.2f}x)")
            cells.append(f"{by_mode['bf16']['peak_mib']:,.0f}")
        print(f"| {shape[0]} | " + " | ".join(cells) + " |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
