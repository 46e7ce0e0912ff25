"""The engine's quantization points on a PyTorch model's layers (altgrad.torch.quantize_model).

Every nn.Linear becomes a matmul Y = X·Wᵀ with three points named as the engine names them: the
module's name without nanoGPT's "transformer." prefix, then ":act", ":weight" or ":grad"
(`h.3.mlp.c_fc:act`). The recipe is read and resolved by the engine's own code, so a config's
[quant] table means the same here. Each enabled point is an engine PointQuantizer: its scaling
state (delayed histories), its statistics and its stochastic-rounding streams are the engine's.

The passes follow docs/quantization.md: the forward pass multiplies Q(X) and Q(W); the backward pass
computes dX = Q(dY)·Q(W) and dW = Q(dY)ᵀ·Q(X), and the bias gradient from the unquantized dY. Under
per-tensor scaling every GEMM reads the one copy of an operand; under block scaling (MX) each GEMM
gets its own copy blocked along its reduction dimension: dX's W and dW's dY and X are the
column-wise copies. Calls come in the engine's order (X, W forward; dY, W, dY, X backward), so
stochastic rounding draws the engine's words.

A model that passes its attention core's operands through torch.nn.Identity modules named q, k, v
and probs in its attention module gets the engine's points there too (`h.0.attn.probs`): forward
Q(t), backward the gradient unchanged, so scores = Q(q)·Q(k)ᵀ, out = Q(probs)·Q(v), their
gradients use the same copies, and the softmax backward the unquantized probabilities, as the
engine does. Under per-tensor scaling only: block scaling gives each attention GEMM its own copy.
"""
import json
import os
import pathlib

import numpy as np
import torch

from . import _core
from .runs import _checkpoint_dir, _read_safetensors

_ROLES = ("act", "weight", "grad")
_PREFIX = "transformer."  # nanoGPT keeps its blocks in model.transformer


def _matmul_name(module_name):
    return module_name[len(_PREFIX):] if module_name.startswith(_PREFIX) else module_name


_ATTENTION_OPERANDS = ("q", "k", "v", "probs")


def _is_attention_operand(name, module):
    """A model exposes an attention operand by passing it through a torch.nn.Identity named q, k, v
    or probs inside its attention module (`h.0.attn.q`), as tests/reference/torch_gpt.py does."""
    parent, _, leaf = name.rpartition(".")
    return isinstance(module, torch.nn.Identity) and leaf in _ATTENTION_OPERANDS and parent.endswith("attn")


def _evaluating():
    """A forward pass without autograd is an evaluation (asked outside the Function, whose forward
    always runs without it)."""
    return not torch.is_grad_enabled()


def _cpu_float32(t, what):
    if t.device.type != "cpu":
        raise ValueError(f"altgrad runs on the CPU only; {what} is on {t.device} (move the model with .cpu())")
    if t.dtype != torch.float32:
        raise TypeError(f"altgrad quantizes float32; {what} is {t.dtype} (convert the model with .float())")


def _quantized(point, rows, along_rows, frozen, causal=False):
    """A new tensor of Q(rows), rows a C-contiguous (rows, cols) float32 tensor, by `point` for the
    GEMM that reduces along its rows (along_rows) or columns; frozen: an evaluation's call, which
    records nothing; causal: causal attention probabilities, whose masked zeros are not counted."""
    out = np.empty(rows.shape, dtype=np.float32)
    point.apply(rows.detach().numpy(), out, along_rows, frozen, causal)
    return torch.from_numpy(out)


class _Matmul:
    """One Linear's three points: a PointQuantizer per enabled point, None where it is off."""

    def __init__(self, name, quantizers):
        self.name = name
        self.points = dict(zip(_ROLES, quantizers))

    def copy(self, role, t, along_rows, frozen=False):
        """t (rows, cols) as the GEMM that reduces along its rows (along_rows) or columns reads it."""
        point = self.points[role]
        return t if point is None else _quantized(point, t, along_rows, frozen)

    def column_copy(self, role, t, forward_copy):
        """The copy a backward GEMM reducing down t's rows reads: the forward's under per-tensor scaling
        and under a weight's 2-D tiles, which W and its transpose share."""
        point = self.points[role]
        if point is None or point.settings.scaling != "block" or point.settings.tile:
            return forward_copy
        return self.copy(role, t, along_rows=True)


class _QuantizedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, matmul, frozen):
        _cpu_float32(x, f"the input of {matmul.name}")
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        w = weight.contiguous()
        xq, wq = matmul.copy("act", x2, False, frozen), matmul.copy("weight", w, False, frozen)
        y = torch.nn.functional.linear(xq, wq, bias)
        ctx.save_for_backward(x2, w, xq, wq)
        ctx.matmul, ctx.shape, ctx.has_bias = matmul, x.shape, bias is not None
        return y.reshape(*x.shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, dy):
        x2, w, xq, wq = ctx.saved_tensors
        m = ctx.matmul
        dy2 = dy.reshape(-1, dy.shape[-1]).contiguous()
        dyq = m.copy("grad", dy2, False)                 # dX = dY·W reduces over out features
        w_for_dx = m.column_copy("weight", w, wq)
        dy_for_dw = m.column_copy("grad", dy2, dyq)      # dW = dYᵀ·X reduces over tokens
        x_for_dw = m.column_copy("act", x2, xq)
        dx = (dyq @ w_for_dx).reshape(ctx.shape)
        dw = dy_for_dw.t() @ x_for_dw
        db = dy2.sum(0) if ctx.has_bias else None        # the unquantized dY, as the engine
        return dx, dw, db, None, None


class _QuantizedOperand(torch.autograd.Function):
    """An attention operand: forward Q(t), rows along its last axis; backward the gradient unchanged."""

    @staticmethod
    def forward(ctx, t, point, causal, frozen):
        _cpu_float32(t, "an attention operand")
        return _quantized(point, t.reshape(-1, t.shape[-1]).contiguous(), False, frozen, causal).reshape(t.shape)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None, None


class QuantizedModel:
    """A model whose Linear layers (and exposed attention operands) run through AltGrad's points.

    points: every point of the resolved recipe, name -> settings (`.as_dict()`), in the engine's order.
    step: the training step in progress (0-based); stochastic streams and delayed scales are the step's.
    Call next_step() once per optimizer step: it records the step's amaxes into the delayed-scaling
    histories, as the engine does when a step ends, and begins the next. Forward passes run without
    autograd (torch.no_grad()) are evaluations: they use the scales and change no state.
    """

    def __init__(self, model, recipe, seed, step, source):
        linears = [(n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
        if not linears:
            raise ValueError("the model has no torch.nn.Linear layers to quantize")
        for name, module in linears:
            _cpu_float32(module.weight, f"{name}.weight")
        operands = [(n, m) for n, m in model.named_modules() if _is_attention_operand(n, m)]
        names = [(f"{_matmul_name(n)}:{role}", role, _matmul_name(n) != "lm_head") for n, _ in linears for role in _ROLES]
        names += [(_matmul_name(n), "act", False) for n, _ in operands]
        self.preset, recipe_seed, resolved = _core.resolve_recipe(recipe, source, names)
        self.seed = recipe_seed if recipe_seed is not None else seed
        self.points = dict(resolved)
        self.step = step
        # Every enabled point's quantizer by name, at the engine's dense index: matmul j's operands
        # at 3·j + role, then the attention operands in the model's order.
        self._quantizers = {name: _core.PointQuantizer(self.points[name], self.seed, index)
                            for index, (name, _, _) in enumerate(names) if self.points[name].enabled}
        self._originals = []
        for name, module in linears:
            matmul = _Matmul(_matmul_name(name), [self._quantizers.get(f"{_matmul_name(name)}:{r}") for r in _ROLES])
            self._patch(module, lambda x, m=module, q=matmul: _QuantizedLinear.apply(x, m.weight, m.bias, q, _evaluating()))
        for name, module in operands:
            point = self._quantizers.get(_matmul_name(name))
            if point is None:
                continue
            if point.settings.scaling == "block":
                raise ValueError(f"{_matmul_name(name)}: under block scaling each attention GEMM reads its own copy, "
                                 "blocked along its own axis; quantize_model quantizes attention operands under "
                                 "per-tensor scaling (none, tensor, delayed) only")
            causal = name.endswith(".probs")
            self._patch(module, lambda t, p=point, c=causal: _QuantizedOperand.apply(t, p, c, _evaluating()))
        self._each_point(lambda p: p.begin_step(self.step))

    def _patch(self, module, forward):
        self._originals.append((module, module.forward))
        module.forward = forward

    def _each_point(self, action):
        for point in self._quantizers.values():
            action(point)

    def next_step(self) -> None:
        """Ends the step in progress (delayed scaling records its amax) and begins the next."""
        self._each_point(lambda p: p.end_step())
        self.step += 1
        self._each_point(lambda p: p.begin_step(self.step))

    def stats(self) -> dict[str, dict]:
        """Each enabled point's statistics of the step in progress, merged over its calls; under block
        scaling the column-wise copies' under "colwise"."""
        out = {}
        for name, point in self._quantizers.items():
            out[name] = point.step_stats()
            columns = point.column_stats()
            if columns["calls"] > 0:
                out[name]["colwise"] = columns
        return out

    def delayed_state(self) -> dict[str, tuple[list[float], float]]:
        """name -> (amax history oldest first, scale) for every delayed-scaling point."""
        states = {name: point.delayed_state() for name, point in self._quantizers.items()}
        return {name: state for name, state in states.items() if state is not None}

    def load_state(self, path: str | os.PathLike) -> None:
        """Continues from an AltGrad checkpoint (or a run directory's latest): every delayed-scaling
        point's history and scale from its quant.safetensors, and the step after the checkpoint's."""
        checkpoint = _checkpoint_dir(path)
        saved, _ = _read_safetensors(checkpoint / "quant.safetensors") if (checkpoint / "quant.safetensors").exists() else ({}, {})
        for name in self.delayed_state():
            if f"{name}.scale" not in saved:
                raise ValueError(f"{checkpoint}/quant.safetensors has no delayed-scaling state for {name}")
            self._quantizers[name].restore_delayed(saved[f"{name}.amax_history"].tolist(),
                                                   float(saved[f"{name}.scale"].item()))
        self.step = int(json.loads((checkpoint / "state.json").read_text())["step"])
        self._each_point(lambda p: p.begin_step(self.step))

    def remove(self) -> None:
        """Gives the layers back their own forward."""
        for module, forward in self._originals:
            module.forward = forward
        self._originals = []


def quantize_model(model: torch.nn.Module, recipe: str | dict, seed: int = 0, step: int = 0,
                   state: str | os.PathLike | None = None, source: str = "recipe") -> QuantizedModel:
    """Puts AltGrad's quantization points on `model`'s Linear layers (CPU, float32), and on the
    attention operands it exposes (torch.nn.Identity modules named q, k, v, probs in an attention
    module), and returns the QuantizedModel that holds them.

    recipe: a config's [quant] table as TOML text (with or without the [quant] header) or as a dict,
    e.g. {"preset": "fp8-hybrid", "override": [{"match": "h.*.mlp.c_fc:act", "format": "e1m6"}]}.
    Presets, role tables, overrides and their errors are the engine's (docs/quantization.md);
    [[quant.phase]] schedules are for `altgrad train`. seed: stochastic rounding's, unless the recipe
    names one (the engine's default is the run's seed). step: the step in progress. state: a
    checkpoint or run directory to continue from (load_state). source: the recipe's name in messages.
    """
    quantized = QuantizedModel(model, recipe, seed, step, source)
    if state is not None:
        quantized.load_state(pathlib.Path(state))
    return quantized
