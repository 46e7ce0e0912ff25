"""The diagnostics of one logged training step, recomputed in float64 PyTorch from what the run
left on disk, by the definitions of docs/quantization.md ("Diagnostics"):

- the weights the step used: the checkpoint of the previous step (diagnostics are computed before
  the step's optimizer update),
- the step's batch: `altgrad train --dump-batch STEP` (batches/step_<STEP>.safetensors),
- the recipe: the run's recipe.json.

Supported recipes: every enabled point is a `:grad` point with round-to-nearest-even and no
scaling (`scaling = "none"`), so the forward pass is the unquantized one and the quantized backward
is dY -> Q(dY) at the output of each Linear (straight-through estimator). That is enough to check
every diagnostic against the engine: kurtosis, attention entropy and dead units from the forward
pass, gradient norms and SNR from the two backward passes, code usage from the quantized gradients.
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt import GPT, read_safetensors  # noqa: E402

# Element formats by name (docs/formats.md): exponent bits, mantissa bits, bias, special values.
FORMATS = {
    "e4m3": (4, 3, 7, "fn"),
    "e5m2": (5, 2, 15, "ieee"),
    "e3m4": (3, 4, 3, "ieee"),
    "e2m5": (2, 5, 1, "fn"),
    "e1m6": (1, 6, 0, "fn"),
}


def format_of(name):
    if name not in FORMATS:
        raise SystemExit(f"diagnostics_reference: format {name!r} not supported here")
    return FORMATS[name]


def max_finite(fmt):
    E, M, bias, policy = fmt
    if policy == "ieee":
        return 2.0 ** ((2 ** E - 2) - bias) * (2 - 2.0 ** -M)
    return 2.0 ** ((2 ** E - 1) - bias) * (2 - 2.0 ** (1 - M))  # fn: only the all-ones code is NaN


def non_nan_codes(fmt):
    E, M, _, policy = fmt
    total = 2 ** (1 + E + M)
    return total - (2 * (2 ** M - 1) if policy == "ieee" else 2)


def quantize_nearest_even(x, fmt):
    """x (float64) rounded to the format's grid, nearest with ties to even, saturating."""
    E, M, bias, _ = fmt
    a = x.abs()
    exponent = torch.floor(torch.log2(torch.where(a > 0, a, torch.ones_like(a))))
    exponent = torch.clamp(exponent, min=1 - bias)  # subnormals share the smallest normal step
    step = torch.pow(2.0, exponent - M)
    q = torch.round(a / step) * step  # exact in float64; torch.round rounds half to even
    q = torch.clamp(q, max=max_finite(fmt))
    return torch.copysign(q, x)


def bucket_edge(v):
    """The lower edge of the 1/8-binade bucket of float32 |v|: its bits with the low 20 cleared."""
    bits = struct.unpack("<I", struct.pack("<f", abs(v)))[0] & 0xFFF00000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def profile(x, fmt):
    """docs/quantization.md, "Value profiles", of float64 values x: moments, nearest-rank
    percentiles of |x| as bucket edges, and the range fit of fmt at the per-tensor scale
    max_finite / amax (a point that is off), rounded to float32 as the engine rounds it."""
    x = x.flatten()
    magnitudes = sorted(x.abs().tolist())
    n = len(magnitudes)
    rank = lambda p: magnitudes[max(math.ceil(p / 100 * n), 1) - 1]  # noqa: E731
    moments = {"mean": x.mean().item(), "std": x.std(unbiased=False).item(), "min": x.min().item(),
               "max": x.max().item()}
    percentiles = {"p50": bucket_edge(rank(50)), "p99": bucket_edge(rank(99)), "p99_9": bucket_edge(rank(99.9))}
    scale = torch.tensor(max_finite(fmt) / magnitudes[-1], dtype=torch.float32).double()
    a = (x.abs().float() * scale.float()).double()  # fl(|x|·s), as the quantizer forms it
    E, M, bias, _ = fmt
    step = torch.pow(2.0, torch.clamp(torch.floor(torch.log2(torch.where(a > 0, a, torch.ones_like(a)))),
                                      min=1 - bias) - M)
    rounded = torch.round(a / step) * step
    nonzero = x != 0
    flush = nonzero & (rounded == 0)
    fit = {"overflow_pct": 100 * (rounded > max_finite(fmt)).double().mean().item(),
           "flush_pct": 100 * flush.double().mean().item(),
           "subnormal_pct": 100 * (nonzero & ~flush & (a < 2.0 ** (1 - bias))).double().mean().item()}
    return moments, percentiles, fit


def codes_hit(q):
    """The distinct codes among quantized values: (sign bit, magnitude), so -0 and +0 differ."""
    return set(zip(torch.signbit(q).flatten().tolist(), q.abs().flatten().tolist()))


class GradQuant(torch.autograd.Function):
    """Identity forward; backward hands on Q(dY) and records in `seen` the codes it produced and the
    percentages of exact zeros in dY and in Q(dY). dY is counted as the float32 the engine holds:
    a float64 value below float32's range (a dead unit's GELU slope) is a zero there."""

    @staticmethod
    def forward(ctx, y, fmt, seen):
        ctx.fmt, ctx.seen = fmt, seen
        return y.view_as(y)

    @staticmethod
    def backward(ctx, dy):
        q = quantize_nearest_even(dy, ctx.fmt)
        ctx.seen["codes"] |= codes_hit(q)
        ctx.seen["zero_in_pct"] = 100 * (dy.float() == 0).double().mean().item()
        ctx.seen["zero_out_pct"] = 100 * (q == 0).double().mean().item()
        return q, None, None


def pearson_kurtosis(x):
    x = x.double().flatten()
    d = x - x.mean()
    var = (d * d).mean()
    return 0.0 if var == 0 else ((d ** 4).mean() / var ** 2).item()


def gelu_tail(z):
    phi = z * 0.5 * (1 + torch.erf(z / math.sqrt(2)))
    dphi = 0.5 * (1 + torch.erf(z / math.sqrt(2))) + z * torch.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    return (phi.abs() < 0.01) & (dphi.abs() < 0.01)


def silu_tail(z):
    s = torch.sigmoid(z)
    return ((z * s).abs() < 0.01) & ((s * (1 + z * (1 - s))).abs() < 0.01)


def attention_probs(block, x, n_head):
    """The causal softmax of one block's attention, (B, NH, T, T), from its input x."""
    B, T, C = x.shape
    q, k, _ = block.attn.c_attn(block.ln_1(x)).split(C, dim=2)
    hs = C // n_head
    q = q.view(B, T, n_head, hs).transpose(1, 2)
    k = k.view(B, T, n_head, hs).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
    att = att.masked_fill(torch.tril(torch.ones(T, T, dtype=torch.bool)) == 0, float("-inf"))
    return F.softmax(att, dim=-1)


def row_entropy(p):
    return -(torch.where(p > 0, p * torch.log(p), torch.zeros_like(p))).sum(-1)


def log2_histogram(w, lo=-24, hi=7):
    """Counts of floor(log2|w|) for k = lo … hi (|w| in [2^k, 2^(k+1))), below 2^lo, from 2^(hi+1) up."""
    finite = w[torch.isfinite(w)].abs()
    counts = [int(((finite >= 2.0 ** k) & (finite < 2.0 ** (k + 1))).sum()) for k in range(lo, hi + 1)]
    return {"counts": counts, "zero_or_below": int((finite < 2.0 ** lo).sum()),
            "above": int((finite >= 2.0 ** (hi + 1)).sum()), "non_finite": int((~torch.isfinite(w)).sum())}


def load_model(checkpoint):
    cfg = json.load(open(os.path.join(checkpoint, "config.json")))
    state, _ = read_safetensors(os.path.join(checkpoint, "model.safetensors"))
    model = GPT(cfg)
    model.load_state_dict(state, strict=True)
    return cfg, model.double()


def grad_points(run_dir):
    """{linear module name: format} for every enabled point, checking the recipe is supported."""
    recipe = json.load(open(os.path.join(run_dir, "recipe.json")))
    assert "accumulate" not in recipe, "the recipe emulates tensor-core sums; this reference sums in FP32"
    points = {}
    for p in recipe["points"]:
        if not p["enabled"]:
            continue
        if not p["name"].endswith(":grad") or p["scaling"] != "none" or p["rounding"] != "nearest":
            raise SystemExit(f"diagnostics_reference: point {p['name']} ({p['scaling']}, {p['rounding']}) not supported")
        points[p["name"][: -len(":grad")]] = (p["format"], format_of(p["format"]))
    return points


def module_of(model, point):
    """The torch module of a point's matmul: h.1.mlp.c_fc -> transformer.h.1.mlp.c_fc."""
    return model.lm_head if point == "lm_head" else model.get_submodule("transformer." + point)


def recompute(run_dir, step):
    """{diagnostic: {name: value}} for logged step `step` of the run in run_dir, and the step's
    training loss as {"loss": {"step": value}} (the forward pass is unquantized here)."""
    cfg, model = load_model(os.path.join(run_dir, "checkpoints", f"step_{step - 1}"))
    batch, _ = read_safetensors(os.path.join(run_dir, "batches", f"step_{step}.safetensors"))
    tokens, targets = batch["tokens"].long(), batch["targets"].long()
    if tokens.shape[0] != 1:
        raise SystemExit("diagnostics_reference: gradient accumulation is not supported here")
    tokens, targets = tokens[0], targets[0]
    n_head = cfg["n_head"]

    # Forward-pass inputs and outputs, captured by hooks.
    seen = {}

    def capture(name, what):
        def hook(module, inputs, output):
            seen[name] = (inputs[0] if what == "input" else output).detach()
        return hook

    hooks = []
    for i, block in enumerate(model.transformer.h):
        hooks += [block.attn.c_attn.register_forward_hook(capture(f"h.{i}.attn.c_attn:act", "input")),
                  block.attn.c_attn.register_forward_hook(capture(f"h.{i}.attn.qkv", "output")),
                  block.attn.c_proj.register_forward_hook(capture(f"h.{i}.attn.c_proj:act", "input")),
                  block.mlp.c_fc.register_forward_hook(capture(f"h.{i}.mlp.c_fc:act", "input")),
                  block.mlp.c_fc.register_forward_hook(capture(f"h.{i}.mlp.z", "output")),
                  block.mlp.c_proj.register_forward_hook(capture(f"h.{i}.mlp.c_proj:act", "input")),
                  block.register_forward_hook(capture(f"h.{i}", "output")),
                  block.register_forward_hook(capture(f"h.{i}.input", "input"))]
    hooks.append(model.lm_head.register_forward_hook(capture("lm_head:act", "input")))

    # The FP32 shadow pass's gradients (here float64, unquantized).
    _, loss = model(tokens, targets)
    step_loss = loss.item()
    model.zero_grad()
    loss.backward()
    exact = {n: p.grad.clone() for n, p in model.named_parameters()}
    for h in hooks:
        h.remove()

    # The quantized backward: Q(dY) feeds the GEMMs of every Linear with an enabled :grad point; the
    # bias gradient is the row sum of the unquantized dY (docs/quantization.md).
    seen_grad = {}
    originals = {}
    for point, (_, fmt) in grad_points(run_dir).items():
        module = module_of(model, point)
        seen_grad[point] = {"codes": set()}
        originals[point] = module.forward

        def quantized_forward(x, module=module, fmt=fmt, seen=seen_grad[point]):
            y = GradQuant.apply(F.linear(x, module.weight), fmt, seen)
            return y if module.bias is None else y + module.bias
        module.forward = quantized_forward
    _, loss = model(tokens, targets)
    model.zero_grad()
    loss.backward()
    quantized = {n: p.grad.clone() for n, p in model.named_parameters()}
    for point, forward in originals.items():
        module_of(model, point).forward = forward

    out = {"loss": {"step": step_loss}, "kurtosis": {}, "attention_entropy": {}, "dead_units": {}, "grad_norm": {},
           "grad_snr_db": {}, "code_usage": {}, "profile_moments": {}, "profile_percentiles": {}, "range_fit": {}, "grad_zeros": {}}
    for name, value in seen.items():
        if name.endswith(":act") or name.count(".") == 1:
            out["kurtosis"][name] = pearson_kurtosis(value)
        if name.endswith(".attn.qkv"):  # the attention's inputs q, k, v: thirds of c_attn's output
            for part, third in zip("qkv", value.split(value.shape[-1] // 3, dim=-1)):
                out["kurtosis"][name.replace("qkv", part)] = pearson_kurtosis(third)
        if name.endswith(":act"):
            moments, percentiles, fit = profile(value, format_of("e1m6"))
            out["profile_moments"][name] = moments
            out["profile_percentiles"][name] = percentiles
            out["range_fit"][name] = fit
    with torch.no_grad():
        for i, block in enumerate(model.transformer.h):
            probs = attention_probs(block, seen[f"h.{i}.input"], n_head)  # (B, NH, T, T)
            per_head = row_entropy(probs).mean(dim=(0, 2)).tolist()  # mean over the B·T query rows
            out["attention_entropy"][f"h.{i}.attn"] = {"mean": sum(per_head) / len(per_head),
                                                       "min": min(per_head), "per_head": per_head}
            z = seen[f"h.{i}.mlp.z"].reshape(-1, seen[f"h.{i}.mlp.z"].shape[-1])
            if cfg["mlp"] == "swiglu":
                tail = silu_tail(z[:, : z.shape[1] // 2])
            else:
                tail = gelu_tail(z)
            out["dead_units"][f"h.{i}.mlp"] = tail.all(dim=0).double().mean().item()
    total = 0.0
    for name, g in quantized.items():
        squared = (g * g).sum().item()
        total += squared
        out["grad_norm"][name] = math.sqrt(squared)
        noise = ((g - exact[name]) ** 2).sum().item()
        signal = (exact[name] ** 2).sum().item()
        out["grad_snr_db"][name] = math.inf if noise == 0 else 10 * math.log10(signal / noise)
    out["grad_norm"]["global"] = math.sqrt(total)
    out["grad_linf"] = {name: g.abs().max().item() for name, g in quantized.items()}
    last = cfg["n_layer"] - 1
    block = lambda i: math.sqrt(sum((g * g).sum().item() for n, g in quantized.items()  # noqa: E731
                                    if n.startswith(f"transformer.h.{i}.")))
    out["grad_layer_ratio"] = {"top_over_bottom": block(last) / block(0)}
    out["weight_log2"] = {name: log2_histogram(p.detach()) for name, p in model.named_parameters()}
    for point, (_, fmt) in grad_points(run_dir).items():
        out["code_usage"][f"{point}:grad"] = len(seen_grad[point]["codes"]) / non_nan_codes(fmt)
        out["grad_zeros"][f"{point}:grad"] = {k: seen_grad[point][k] for k in ("zero_in_pct", "zero_out_pct")}
    return out


def logged(run_dir, step):
    """The diagnostics of metrics.jsonl's line for `step`, with the step's loss as {"loss": {"step": ...}},
    the per-tensor gradient norms of its "grad" record with the global one (before clipping) as
    grad_norm's "global", and the L-infinity norms and layer ratio of that record."""
    for line in open(os.path.join(run_dir, "metrics.jsonl")):
        m = json.loads(line)
        if m["step"] == step:
            diag = dict(m["diag"], loss={"step": m["loss"]})
            diag["grad_norm"] = dict(m["grad"]["l2"], **{"global": m["grad_norm"]})
            diag["grad_linf"] = m["grad"]["linf"]
            diag["grad_layer_ratio"] = {"top_over_bottom": m["grad"]["layer_ratio"]}
            acts = {p: v for p, v in m["diag"]["profile"].items() if p.endswith(":act")}
            diag["profile_moments"] = {p: {k: v[k] for k in ("mean", "std", "min", "max")} for p, v in acts.items()}
            diag["profile_percentiles"] = {p: {k: v[k] for k in ("p50", "p99", "p99_9")} for p, v in acts.items()}
            diag["range_fit"] = {p: {k: v["fit"][k] for k in ("overflow_pct", "subnormal_pct", "flush_pct")}
                                 for p, v in acts.items()}
            diag["grad_zeros"] = {p: {k: v[k] for k in ("zero_in_pct", "zero_out_pct")}
                                  for p, v in m["quant"].items() if p.endswith(":grad")}
            return diag
    raise SystemExit(f"diagnostics_reference: no metrics line for step {step} in {run_dir}")


def write_tensor(path, name, values):
    """Overwrites one F32 tensor of a safetensors file in place (same shape)."""
    with open(path, "r+b") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        begin, end = header[name]["data_offsets"]
        data = values.float().contiguous().numpy().tobytes()
        assert len(data) == end - begin, name
        f.seek(8 + length + begin)
        f.write(data)
