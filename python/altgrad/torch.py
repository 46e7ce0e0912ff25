"""AltGrad's quantizer inside PyTorch autograd (CPU float32 tensors).

    from altgrad.torch import fake_quant, quantize_model
    y = fake_quant(t, "e4m3", scaling="tensor")   # forward: the engine's Q(t); backward: identity
    q = quantize_model(model, 'preset = "mx8"')   # the engine's points on every Linear (quantized_model.py)

The backward pass is the straight-through estimator: the gradient passes unchanged, as through the
engine's quantization points (docs/quantization.md).
"""
import torch as _torch

from . import quantize as _quantize
from .quantized_model import QuantizedModel, quantize_model

__all__ = ["fake_quant", "FakeQuant", "quantize_model", "QuantizedModel"]


class FakeQuant(_torch.autograd.Function):
    """Forward: altgrad.quantize on the tensor's memory; backward: the gradient unchanged."""

    @staticmethod
    def forward(ctx, t, options, stats_sink):
        y, stats = _quantize(t.detach().contiguous().numpy(), **options)
        stats_sink.update(stats)
        return _torch.from_numpy(y)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


def fake_quant(t: _torch.Tensor, format: str, return_stats: bool = False, **options):
    """Fake-quantizes a CPU float32 tensor into `format` (altgrad.quantize's options: rounding,
    scaling, scale, block, scale_rule, scale_format, sr_bits, tile, seed, stream, saturate, margin); the gradient
    passes straight through.
    With return_stats=True returns (tensor, statistics of the pass)."""
    if not isinstance(t, _torch.Tensor):
        raise TypeError(f"fake_quant takes a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise ValueError(f"altgrad runs on the CPU only; the tensor is on {t.device} (move it with .cpu())")
    if t.dtype != _torch.float32:
        raise TypeError(f"fake_quant takes float32 tensors, got {t.dtype}; convert with .float()")
    stats = {}
    y = FakeQuant.apply(t, dict(options, format=format), stats)
    return (y, stats) if return_stats else y
