"""AltGrad from Python: the C++ engine's number formats and fake quantizer on numpy float32 arrays.

    import altgrad
    altgrad.formats()                  # the named formats, as `altgrad formats` lists them
    f = altgrad.Format("e4m3")         # any name of the engine's grammar: "e5m2fnuz,bias=16", ...
    f.max_finite, f.values()           # 448.0; every finite value, ascending
    f.encode(x), f.decode(codes), f.spacing(x)
    y, stats = altgrad.quantize(x, "e4m3", rounding="stochastic", scaling="tensor", seed=1)
    out = altgrad.gemm(a_codes, bt_codes, accumulate="hopper")   # what an H100's FP8 GEMM returns

quantize() reads x where it lies (float32, C-contiguous: no copy) and returns the dequantized array
and the statistics the engine gathers in the same pass (docs/python.md lists them). Stochastic
rounding draws the engine's Philox words keyed by (seed, stream), element i at counter i, so its
bits equal the engine's. Bad names raise ValueError with the engine's message.

    run = altgrad.read_run("runs/default")          # run.config, run.metrics, run.events
    sweep = altgrad.read_sweep("sweeps/ablation")   # sweep.index, sweep.summary, sweep.runs
    state = altgrad.load_checkpoint("runs/default") # nanoGPT names -> arrays (as_torch=True: tensors)
    from altgrad.torch import fake_quant            # the quantizer in autograd (straight-through)
"""
import numpy as _np

from . import _core
from ._core import AccumulatorError, Format, FormatError, formats
from .runs import Run, Sweep, load_checkpoint, read_run, read_sweep

__all__ = ["AccumulatorError", "Format", "FormatError", "formats", "gemm", "hadamard", "quantize", "read_run", "read_sweep", "load_checkpoint", "Run", "Sweep"]


def _float32_array(x, what="x"):
    if not isinstance(x, _np.ndarray):
        raise TypeError(f"{what} must be a numpy array of float32, got {type(x).__name__}")
    if x.dtype != _np.float32:
        raise TypeError(f"{what} must be float32 (AltGrad quantizes float32 without copying), got {x.dtype}; "
                        f"convert with {what}.astype(numpy.float32)")
    if not x.flags.c_contiguous:
        raise TypeError(f"{what} must be C-contiguous; pass numpy.ascontiguousarray({what})")
    return x


def quantize(x: _np.ndarray, format: str, rounding: str = "nearest", scaling: str = "none", scale: float | None = None,
             block: int | str = 32, seed: int = 0, stream: int = 0, saturate: bool = True, margin: int = 0,
             codes: bool = False, out: _np.ndarray | None = None, scale_rule: str | None = None,
             scale_format: str = "e8m0", sr_bits: int = 32, tile: bool = False,
             hadamard: dict | None = None) -> tuple[_np.ndarray, dict]:
    """Fake-quantizes x into `format`: returns (y, stats) with y = Q(x · s) / s.

    scaling: "none" (s = scale, default 1), "tensor" (s = max_finite / (amax · 2^margin), current
    scaling) or "block" (blocks of `block` elements along the last axis share a scale; by default
    OCP MX's power of two; block="axis": one block per row of the last axis, torchao's axiswise
    scaling). Under "block", scale_format is e8m0 (MX), fp32, fp32_pow2 or e4m3 (NVFP4's
    E4M3 block scales under a tensor scale), and scale_rule (e8m0 only) floor (default), round_up,
    ceil, even or three_quarters (floor's scale, the elements at a further 3/4, as Tseng et al. 2025
    scale before stochastic rounding): docs/formats.md defines each. Under "tensor",
    scale_format="fp32_pow2" rounds the scale down to a power of two (torchao's
    round_scales_to_power_of_2). rounding: nearest, away, zero, up, down, odd, stochastic, stochastic-equal.
    sr_bits (rounding="stochastic" only): random bits per element, 1 to 32 (docs/quantization.md).
    tile=True (scaling="block"): blocks are block x block tiles of the matrix over the last two axes
    (Transformer Engine's 2-D weight scaling; the transpose gets the transposed copy).
    hadamard: {"size": 16, "signs": "te", "seed": 0, "stream": 0} (altgrad.hadamard's options, along
    the last axis) quantizes the transform of x, as the engine quantizes a transformed GEMM's
    operands: y = Q(H(x)), not transformed back.
    saturate=False makes overflow give Inf (or NaN where the format has no Inf). codes=True adds the
    code histogram (formats of up to 8 bits; one more pass over x). out: a float32 C-contiguous array
    of x's size to write into instead of a new one (no allocation; it may be x itself).
    """
    if out is not None:
        _float32_array(out, "out")
    x = _float32_array(x)
    if hadamard is not None:
        options = dict(hadamard)
        x = _core.hadamard(x, options.pop("size"), -1, options.pop("signs", "random"), options.pop("seed", 0),
                           options.pop("stream", 0))
        if options:
            raise ValueError(f"hadamard: unknown option {sorted(options)[0]!r}; valid: size, signs, seed, stream")
    if block == "axis":
        if x.ndim == 0:
            raise ValueError("block='axis' needs an array of at least one axis")
        block = x.shape[-1]
    elif isinstance(block, str):
        raise ValueError(f"block must be an integer or 'axis', got {block!r}")
    return _core.quantize(x, format, rounding, scaling, scale, block, seed, stream, saturate, margin,
                          codes, out, scale_rule, scale_format, sr_bits, tile)


def gemm(a: _np.ndarray, bt: _np.ndarray, a_format: str | None = None, b_format: str | None = None,
         accumulate: str = "hopper", scale_a: float = 1.0, scale_b: float = 1.0,
         out_dtype: str = "float32") -> _np.ndarray:
    """out[i, j] = Σ_k a[i, k] · bt[j, k] as a tensor core computes it: float32 array (M, N).

    a (M, K) and bt (N, K): uint8 codes of an 8-bit format (a_format, b_format; default "e4m3"), or
    float32 values that the format represents exactly (default "bf16"). accumulate: "hopper" (the
    H100/H200 FP8 tensor core with cuBLAS's promotion to FP32 every 128 of K), "hopper_fast"
    (use_fast_accum), "hopper_bf16" (the BF16 tensor core, CUBLAS_COMPUTE_32F), or the
    parameterized "aligned,group=32,bits=13,acc=14,cut=truncate,promote=128,split=1,inputs=format"
    (docs/accumulation.md defines each). The scales multiply the sum as cuBLASLt applies them:
    fl32(fl32(scale_a · scale_b) · sum). out_dtype="bfloat16" rounds the result to BF16 (nearest
    even), returned as float32. Bad names raise ValueError; NaN or Inf in a row of a or bt makes
    that row's outputs the IEEE sum of its products.
    """
    return _core.gemm(a, bt, a_format, b_format, accumulate, _np.float32(scale_a), _np.float32(scale_b), out_dtype)


def hadamard(x: _np.ndarray, size: int, axis: int = -1, signs: str = "random", seed: int = 0,
             stream: int = 0) -> _np.ndarray:
    """x (2-D) with each group of `size` consecutive elements along `axis` mapped to g·D·H/√size.

    H is Sylvester's Hadamard matrix (H[i, j] = (−1)^popcount(i & j)), D = diag(signs): "random"
    (drawn from seed and stream, as the engine draws them), "te" (Transformer Engine's fixed
    16-point vector) or "none". size is 16, 32, 64 or 128 and must divide the axis. Each group is
    transformed in double and rounded once to float32 (docs/formats.md, "Hadamard transforms").
    Transforming both operands of a GEMM along its reduction axis with the same signs keeps the
    product: a @ b.T == hadamard(a, n) @ hadamard(b, n).T up to rounding.
    """
    return _core.hadamard(_float32_array(x), size, axis, signs, seed, stream)


def _checked(method):
    def call(self, x, *args, **kwargs):
        return method(self, _float32_array(x), *args, **kwargs)
    call.__doc__ = method.__doc__
    return call


Format.encode = _checked(Format.encode)
Format.spacing = _checked(Format.spacing)
