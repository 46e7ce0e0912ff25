"""PyTorch side of scripts/gpu_check.sh's speed table: tokens/s of one forward and backward pass
(no optimizer: the passes the CUDA engine runs today) of the same GPT (tests/reference/torch_gpt.py,
nanoGPT's structure with its explicit attention mask) on one GPU, in FP32 without TF32, under BF16
autocast, and under BF16 autocast with torch.compile. Prints one JSON object per line:
{"mode", "tokens_per_s", "peak_mib", "torch"}.
Usage: torch_gpu_pass.py --n_layer L --n_head H --n_embd C --block_size T --batch_size B --steps N"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from torch_gpt import GPT  # noqa: E402

MODES = ("fp32", "bf16", "bf16-compile")


def tokens_per_second(cfg, batch_size, steps, mode):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    model = GPT(cfg).cuda()
    run = torch.compile(model) if mode.endswith("compile") else model
    T = cfg["block_size"]
    x = torch.randint(0, 256, (batch_size, T), device="cuda")
    y = torch.randint(0, 256, (batch_size, T), device="cuda")

    def step():
        model.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mode != "fp32"):
            _, loss = run(x, y)
        loss.backward()

    for _ in range(3):  # warm-up: compilation, the allocator and cuBLAS's choices out of the measurement
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / steps
    return batch_size * T / seconds, torch.cuda.max_memory_allocated() / 2**20


def main():
    p = argparse.ArgumentParser()
    for key in ("n_layer", "n_head", "n_embd", "block_size", "batch_size", "steps"):
        p.add_argument(f"--{key}", type=int, required=True)
    a = p.parse_args()
    cfg = dict(n_layer=a.n_layer, n_head=a.n_head, n_embd=a.n_embd, block_size=a.block_size, vocab_size=256,
               bias=False, norm="layernorm", mlp="gelu", mlp_hidden=4 * a.n_embd)
    for mode in MODES:
        rate, peak = tokens_per_second(cfg, a.batch_size, a.steps, mode)
        print(json.dumps({"mode": mode, "tokens_per_s": rate, "peak_mib": peak, "torch": torch.__version__}),
              flush=True)


if __name__ == "__main__":
    main()
