"""PyTorch reference for evaluating a checkpoint trained with per-tensor scaling: the GPT of
torch_gpt.py with every Linear's input and weight fake-quantized as the checkpoint's recipe.json
says, at the scales its quant.safetensors saved (delayed scaling) — the scales the next training
step would use. E4M3 (OCP, saturating) with round-to-nearest-even is written out here from its
definition, independently of the engine's quantizer.

Usage: torch_quantized_eval.py CHECKPOINT_DIR BATCH.safetensors
BATCH holds tokens, targets (B, T) and the engine's loss. Exit status 0 when the engine's loss
agrees with this one within relative error 1e-5 and the loss with every scale set to 1 (what an
evaluation that ignores the saved scales computes) does not: a checkpoint that cannot tell the two
apart proves nothing and fails too.
"""
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_gpt import GPT, read_safetensors

TOLERANCE = 1e-5
E4M3_MANTISSA_BITS = 3
E4M3_MIN_NORMAL_EXPONENT = -6
E4M3_MAX = 448.0


def round_e4m3(v):
    """Nearest-even onto OCP E4M3's grid, saturating at ±448 (float32 in, float32 out)."""
    a = v.abs()
    _, k = torch.frexp(a)  # a = m · 2^k, m in [0.5, 1): the binade of a is 2^(k-1)
    binade = torch.clamp(k - 1, min=E4M3_MIN_NORMAL_EXPONENT)  # subnormals share the lowest step
    step = torch.pow(2.0, (binade - E4M3_MANTISSA_BITS).to(torch.float32))
    q = torch.clamp(torch.round(a / step) * step, max=E4M3_MAX)  # torch.round is half-to-even
    return torch.copysign(q, v)


def fake_quantizer(settings, scale):
    if not settings["enabled"]:
        return lambda x: x
    assert settings["format"] == "e4m3" and settings["rounding"] == "nearest", settings
    assert settings["scaling"] in ("delayed", "none"), settings
    s = torch.tensor(scale, dtype=torch.float32)
    return lambda x: round_e4m3(x * s) / s


def quantize_linears(model, points, scales):
    """Wraps every Linear so that F.linear sees Q(X) and Q(W), as the engine's :act and :weight points."""
    for name, module in model.named_modules():
        if not isinstance(module, nn.Linear):
            continue
        matmul = name.removeprefix("transformer.")
        act = fake_quantizer(points[matmul + ":act"], scales.get(matmul + ":act", 1.0))
        weight = fake_quantizer(points[matmul + ":weight"], scales.get(matmul + ":weight", 1.0))
        module.forward = lambda x, m=module, qa=act, qw=weight: F.linear(qa(x), qw(m.weight), m.bias)


def loss_with(checkpoint_dir, cfg, points, scales, tokens, targets):
    state, _ = read_safetensors(f"{checkpoint_dir}/model.safetensors")
    model = GPT(cfg)
    model.load_state_dict(state, strict=True)
    quantize_linears(model, points, scales)
    with torch.no_grad():
        return model(tokens, targets)[1].item()


def main():
    checkpoint_dir, batch_path = sys.argv[1], sys.argv[2]
    cfg = json.load(open(f"{checkpoint_dir}/config.json"))
    recipe = json.load(open(f"{checkpoint_dir}/recipe.json"))
    assert "accumulate" not in recipe, "the recipe emulates tensor-core sums; this reference sums in FP32"
    points = {p["name"]: p for p in recipe["points"]}
    for name, p in points.items():  # the attention operands would need hooks this model lacks
        assert not (p["enabled"] and ":" not in name), f"{name} is quantized; this reference handles Linears only"
    saved, _ = read_safetensors(f"{checkpoint_dir}/quant.safetensors")
    scales = {name[: -len(".scale")]: t.item() for name, t in saved.items() if name.endswith(".scale")}
    batch, _ = read_safetensors(batch_path)
    tokens, targets = batch["tokens"].long(), batch["targets"].long()
    engine = batch["loss"].item()

    reference = loss_with(checkpoint_dir, cfg, points, scales, tokens, targets)
    unscaled = loss_with(checkpoint_dir, cfg, points, {}, tokens, targets)
    error = abs(engine - reference) / abs(reference)
    separation = abs(engine - unscaled) / abs(unscaled)
    print(f"engine {engine:.9g}  reference at the saved scales {reference:.9g}  relative error {error:.3e}")
    print(f"reference with every scale 1 {unscaled:.9g}  relative difference from the engine {separation:.3e}")
    return 0 if error <= TOLERANCE < separation / 10 else 1


if __name__ == "__main__":
    sys.exit(main())
