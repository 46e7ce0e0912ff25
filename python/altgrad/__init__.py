"""AltGrad from Python: the C++ engine's number formats and fake quantizer on numpy float32 arrays.

    import altgrad
    altgrad.formats()                  # the named formats, as `altgrad formats` lists them
    f = altgrad.Format("e4m3")         # any name of the engine's grammar: "e5m2fnuz,bias=16", ...
    f.max_finite, f.values()           # 448.0; every finite value, ascending
    f.encode(x), f.decode(codes), f.spacing(x)
    y, stats = altgrad.quantize(x, "e4m3", rounding="stochastic", scaling="tensor", seed=1)

quantize() reads x where it lies (float32, C-contiguous: no copy) and returns the dequantized array
and the statistics the engine gathers in the same pass (docs/python.md lists them). Stochastic
rounding draws the engine's Philox words keyed by (seed, stream), element i at counter i, so its
bits equal the engine's. Bad names raise ValueError with the engine's message.
"""
import numpy as _np

from . import _core
from ._core import Format, FormatError, formats

__all__ = ["Format", "FormatError", "formats", "quantize"]


def _float32_array(x, what="x"):
    if not isinstance(x, _np.ndarray):
        raise TypeError(f"{what} must be a numpy array of float32, got {type(x).__name__}")
    if x.dtype != _np.float32:
        raise TypeError(f"{what} must be float32 (AltGrad quantizes float32 without copying), got {x.dtype}; "
                        f"convert with {what}.astype(numpy.float32)")
    if not x.flags.c_contiguous:
        raise TypeError(f"{what} must be C-contiguous; pass numpy.ascontiguousarray({what})")
    return x


def quantize(x, format, rounding="nearest", scaling="none", scale=None, block=32, seed=0, stream=0,
             saturate=True, margin=0):
    """Fake-quantizes x into `format`: returns (y, stats) with y = Q(x · s) / s.

    scaling: "none" (s = scale, default 1), "tensor" (s = max_finite / (amax · 2^margin), current
    scaling) or "block" (OCP MX: blocks of `block` elements along the last axis share a power of
    two). rounding: nearest, away, zero, up, down, odd, stochastic, stochastic-equal.
    saturate=False makes overflow give Inf (or NaN where the format has no Inf).
    """
    return _core.quantize(_float32_array(x), format, rounding, scaling, scale, block, seed, stream, saturate, margin)


def _checked(method):
    def call(self, x, *args, **kwargs):
        return method(self, _float32_array(x), *args, **kwargs)
    call.__doc__ = method.__doc__
    return call


Format.encode = _checked(Format.encode)
Format.spacing = _checked(Format.spacing)
