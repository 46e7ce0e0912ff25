"""PyTorch side of scripts/gpu_check.sh's speed tables (bench/gpu_speed_table.py): tokens/s of the
same GPT (tests/reference/torch_gpt.py, nanoGPT's structure with its explicit attention mask) on one
GPU, one forward and backward pass per step, or with --train a whole training step (AdamW, fused).
Modes:
  fp32                 FP32 without TF32
  bf16, bf16-compile   BF16 autocast, eager and under torch.compile
  fake-quant, fake-quant-compile
                       BF16 autocast with the research notes' PyTorch plan of fake quantization:
                       every Linear's input and weight cast to E4M3 with a per-tensor scale (amax to
                       E4M3's largest finite value), its output gradient to E5M2 likewise, each cast
                       back before the product; eager and under torch.compile
Prints one JSON object per mode and line: {"mode", "tokens_per_s", "peak_mib", "torch"}.
Usage: torch_gpu_pass.py --n_layer L --n_head H --n_embd C --block_size T --batch_size B --steps N
                         [--train] [--modes fp32,bf16,...]"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from torch_gpt import GPT  # noqa: E402

MODES = ("fp32", "bf16", "bf16-compile", "fake-quant", "fake-quant-compile")


def fake_quant(t, dtype):
    """t on dtype's grid with a per-tensor scale, back in t's precision."""
    scale = torch.finfo(dtype).max / t.detach().abs().amax().float().clamp(min=1e-30)
    return ((t.float() * scale).to(dtype).float() / scale).to(t.dtype)


class FakeQuantLinear(torch.autograd.Function):
    """y = x_q · w_qᵀ; dx = dy_q · w_q, dw = dy_qᵀ · x_q (straight-through), with x, w in E4M3 and dy
    in E5M2."""

    @staticmethod
    def forward(ctx, x, w):
        xq, wq = fake_quant(x, torch.float8_e4m3fn), fake_quant(w.to(x.dtype), torch.float8_e4m3fn)
        ctx.save_for_backward(xq, wq)
        ctx.weight_dtype = w.dtype
        return xq @ wq.t()

    @staticmethod
    def backward(ctx, dy):
        xq, wq = ctx.saved_tensors
        dyq = fake_quant(dy, torch.float8_e5m2).to(xq.dtype)
        dx = dyq @ wq
        dw = dyq.reshape(-1, dyq.shape[-1]).t() @ xq.reshape(-1, xq.shape[-1])
        return dx, dw.to(ctx.weight_dtype)


def quantize_linears(model):
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.forward = lambda x, m=module: FakeQuantLinear.apply(x.to(torch.bfloat16), m.weight)


def tokens_per_second(cfg, batch_size, steps, mode, train):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    model = GPT(cfg).cuda()
    if mode.startswith("fake-quant"):
        quantize_linears(model)
    run = torch.compile(model) if mode.endswith("compile") else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True) if train else None
    T = cfg["block_size"]
    x = torch.randint(0, 256, (batch_size, T), device="cuda")
    y = torch.randint(0, 256, (batch_size, T), device="cuda")

    def step():
        model.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mode != "fp32"):
            _, loss = run(x, y)
        loss.backward()
        if optimizer is not None:
            optimizer.step()

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
    p.add_argument("--train", action="store_true", help="time whole training steps (AdamW), not passes")
    p.add_argument("--modes", default="fp32,bf16,bf16-compile", help="comma-separated, of " + ", ".join(MODES))
    a = p.parse_args()
    modes = a.modes.split(",")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        p.error(f"unknown mode {unknown[0]!r}; the modes are {', '.join(MODES)}")
    cfg = dict(n_layer=a.n_layer, n_head=a.n_head, n_embd=a.n_embd, block_size=a.block_size, vocab_size=256,
               bias=False, norm="layernorm", mlp="gelu", mlp_hidden=4 * a.n_embd)
    for mode in modes:
        rate, peak = tokens_per_second(cfg, a.batch_size, a.steps, mode, a.train)
        print(json.dumps({"mode": mode, "tokens_per_s": rate, "peak_mib": peak, "torch": torch.__version__}),
              flush=True)


if __name__ == "__main__":
    main()
