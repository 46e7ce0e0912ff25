"""PyTorch reference for AltGrad's GPT: loads a checkpoint written by the C++ engine into a
nanoGPT-structured PyTorch model (load_state_dict, strict), recomputes loss, logits, every
parameter gradient and one AdamW step on the same batch, and compares them with the engine's.

Usage: torch_crosscheck.py CHECKPOINT_DIR EXPECTED.safetensors
Exit status 0 when every quantity agrees within relative error 1e-5 (norm-wise, FP32).
"""
import json
import sys

import torch

from comparison import report
from torch_gpt import GPT, read_safetensors

TOLERANCE = 1e-5


def main():
    checkpoint_dir, expected_path = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    cfg = json.load(open(f"{checkpoint_dir}/config.json"))
    state, _ = read_safetensors(f"{checkpoint_dir}/model.safetensors")
    expected, meta = read_safetensors(expected_path)
    model = GPT(cfg)
    model.load_state_dict(state, strict=True)

    tokens = expected["tokens"].long()
    targets = expected["targets"].long()
    logits, loss = model(tokens, targets)
    loss.backward()

    checks = [("loss", loss.detach().reshape(1), expected["loss"]), ("logits", logits.detach(), expected["logits"])]
    for name, p in model.named_parameters():
        checks.append((f"grad.{name}", p.grad, expected[f"grad.{name}"]))

    # The AdamW step starts from the engine's gradients: Adam's first step is nearly sign(g), so
    # gradients that differ in their last bits could flip near-zero entries and hide the optimizer's
    # own agreement.
    for name, p in model.named_parameters():
        p.grad = expected[f"grad.{name}"].clone()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": float(meta["weight_decay"])}, {"params": no_decay, "weight_decay": 0.0}],
        lr=float(meta["lr"]), betas=(float(meta["beta1"]), float(meta["beta2"])), eps=float(meta["eps"]))
    optimizer.step()
    for name, p in model.named_parameters():
        checks.append((f"adamw.{name}", p.detach(), expected[f"adamw.{name}"]))

    worst = report(checks, TOLERANCE, 45)
    print(f"worst relative error {worst:.3e} (tolerance {TOLERANCE:.0e})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
