"""PyTorch reference for AltGrad's SGD: replays, with torch.optim.SGD, the steps the C++ engine took
on the same initial weights, gradients and learning rates, and compares the weights after every
step and the final momentum buffer with the engine's.

Each case file holds params0 [N], grads [S, N], lrs [S], expected [S, N] (the engine's weights after
each step) and, with momentum, momentum_buffer [N]; its metadata gives momentum, nesterov,
weight_decay and the parameter ranges ("offset:size:decay;..."). Each range becomes one PyTorch
parameter, in a group with weight decay when its decay flag is 1 and none otherwise.

Usage: torch_sgd.py CASE.safetensors...
Exit status 0 when every quantity agrees within relative error 1e-6 (norm-wise, FP32).
"""
import sys

import torch

from comparison import report
from torch_gpt import read_safetensors

TOLERANCE = 1e-6


def check_case(path):
    tensors, meta = read_safetensors(path)
    momentum, weight_decay = float(meta["momentum"]), float(meta["weight_decay"])
    nesterov = meta["nesterov"] == "true"
    ranges = [tuple(int(x) for x in r.split(":")) for r in meta["ranges"].split(";")]
    params0 = tensors["params0"]
    params = [torch.nn.Parameter(params0[o:o + n].clone()) for o, n, _ in ranges]
    decay = [p for p, (_, _, d) in zip(params, ranges) if d]
    no_decay = [p for p, (_, _, d) in zip(params, ranges) if not d]
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": weight_decay},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=1.0, momentum=momentum, dampening=0.0, nesterov=nesterov)
    checks = []
    for s, lr in enumerate(tensors["lrs"].tolist()):
        for group in optimizer.param_groups:
            group["lr"] = lr
        for p, (o, n, _) in zip(params, ranges):
            p.grad = tensors["grads"][s, o:o + n].clone()
        optimizer.step()
        checks.append((f"weights after step {s + 1}", torch.cat([p.detach() for p in params]), tensors["expected"][s]))
    if momentum != 0.0:
        buffer = torch.cat([optimizer.state[p]["momentum_buffer"] for p in params])
        checks.append(("momentum_buffer", buffer, tensors["momentum_buffer"]))
    return report(checks, TOLERANCE, 24, prefix=f"{meta['case']:40s} ")


def main():
    worst = max(check_case(path) for path in sys.argv[1:])
    print(f"worst relative error {worst:.3e} (tolerance {TOLERANCE:.0e})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
