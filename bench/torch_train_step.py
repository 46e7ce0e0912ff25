"""PyTorch side of `altgrad bench train`: tokens/s of a full training step (forward, backward,
gradient clipping, AdamW) of the same GPT on random batches, at each requested thread count.
Prints one JSON object: {"runs": [{"threads", "tokens_per_s"}], "peak_rss_mib"}."""
import argparse
import json
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from torch_gpt import GPT  # noqa: E402


def tokens_per_second(cfg, batch_size, steps, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = GPT(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    T = cfg["block_size"]
    x = torch.randint(0, 256, (batch_size, T))
    y = torch.randint(0, 256, (batch_size, T))

    def step():
        optimizer.zero_grad(set_to_none=True)
        _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    for _ in range(2):  # warm-up: allocator and kernels out of the measurement
        step()
    best = float("inf")
    for _ in range(steps):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return batch_size * T / best


def main():
    p = argparse.ArgumentParser()
    for key in ("n_layer", "n_head", "n_embd", "block_size", "mlp_hidden", "batch_size", "steps"):
        p.add_argument(f"--{key}", type=int, required=True)
    p.add_argument("--bias", type=int, default=0)
    p.add_argument("--norm", default="layernorm")
    p.add_argument("--mlp", default="gelu")
    p.add_argument("--threads", type=int, nargs="+", required=True)
    a = p.parse_args()
    cfg = dict(n_layer=a.n_layer, n_head=a.n_head, n_embd=a.n_embd, block_size=a.block_size, vocab_size=256,
               bias=bool(a.bias), norm=a.norm, mlp=a.mlp, mlp_hidden=a.mlp_hidden)
    runs = [{"threads": t, "tokens_per_s": tokens_per_second(cfg, a.batch_size, a.steps, t)} for t in a.threads]
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"runs": runs, "peak_rss_mib": peak_mib, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
