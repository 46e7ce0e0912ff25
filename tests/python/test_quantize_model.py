"""altgrad.torch.quantize_model against the engine: a tiny nanoGPT-shaped run trains 11 steps under
a recipe, with a checkpoint and a dumped batch at every step. For each of steps 3 to 11 the PyTorch
GPT of tests/reference, loaded from the checkpoint before it and quantized by quantize_model with
that checkpoint's delayed-scaling state and step, recomputes the step on its batch. Its loss, every
parameter's gradient and the points' statistics must be the engine's.

The engine's gradient of a step is read exactly from SGD's momentum buffer: with momentum 1e-30 the
buffer after step k is 1e-30·b(k-1) + g(k), which rounds to g(k) in float32.

Tolerance. Both sides compute in float32, in different orders (OpenBLAS against PyTorch's kernels,
the engine's layer norm sums against ATen's), so activations differ in their last bit. Quantization
passes that through unchanged unless an element lies within an ulp of a rounding boundary: then it
lands one grid step away (1/8 of its value for E4M3, 1/64 for E1M6) and every later operand of the
step moves a little, so a few more elements flip. Measured (AMD Zen 4, OpenBLAS Cooperlake kernel):
steps without a flip agree to 2e-7 to 4e-6 norm-wise in every gradient; a step with one reaches
5e-3 to 1.5e-2, in up to 2 of the 9 steps of a recipe. So each step's loss must agree within 1e-4
(a flip moves it by a few 1e-6), its statistics tightly where its gradients agree, and at least 5
of the 9 steps must be clean, their worst gradient within TOLERANCE = 5e-3. The faults
it must catch move every step: 3e-2 to 6e-2 (MX column-wise copies blocked along the wrong axis),
7e-2 (stochastic rounding with another seed), 0.17 (delayed scaling without the amax history), so
each must leave fewer clean steps than a correct run needs.

Stochastic rounding of the attention probabilities (recipe attention-operands) flips far more
often: every probability whose last bit differs between the two sides can land on the other grid
value. How often depends on the machine's PyTorch kernels: 2 of 9 steps flipped on the Zen 4 above,
5 of 9 on an AMD Zen 3 with OpenBLAS's Zen kernel and 6 of 9 with its Sandybridge kernel
(OPENBLAS_CORETYPE). There one clean step is required, and the faults must leave none.
"""
import json
import os
import pathlib
import random
import struct
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from altgrad.torch import quantize_model  # noqa: E402
import altgrad.quantized_model as quantized_model  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from torch_gpt import GPT, read_safetensors  # noqa: E402

TOLERANCE = 5e-3
STEPS = range(3, 12)  # each recomputed from the checkpoint of the step before
LOSS_TOLERANCE = 1e-4  # relative: one flipped element moves the loss by a few 1e-6
SEED = 1337

CONFIG = """
n_layer = 2
n_head = 2
n_embd = 64
block_size = 32
batch_size = 2
bias = true
optimizer = "sgd"
momentum = 1e-30
weight_decay = 0.0
grad_clip = 0.0
learning_rate = 0.0625
min_lr = 0.0625
warmup_iters = 0
lr_decay_iters = 11
max_iters = 11
eval_interval = 100
eval_iters = 1
log_interval = 1
checkpoint_interval = 1
keep_checkpoints = 0
seed = 1337
"""

# As a config writes them; quantize_model reads the same text.
RECIPES = {
    "fp8-hybrid": '[quant]\npreset = "fp8-hybrid"\n',
    "mx8": '[quant]\npreset = "mx8"\n',
    "e1m6-override": '[quant]\npreset = "fp8-hybrid"\n[[quant.override]]\nmatch = "h.*.mlp.c_fc:act"\nformat = "e1m6"\n',
    "mx8-stochastic": '[quant]\npreset = "mx8"\n[quant.act]\nrounding = "stochastic"\n[quant.grad]\nrounding = "stochastic"\n',
    "attention-operands": '[quant]\npreset = "fp8-hybrid"\n[[quant.override]]\nmatch = "h.*.attn.[qkv]"\n'
                          '[[quant.override]]\nmatch = "h.*.attn.probs"\nrounding = "stochastic"\n',
}


@pytest.fixture(scope="module", params=list(RECIPES))
def engine_run(request, tmp_path_factory, altgrad_cli):
    """(recipe text, run directory) of an 11-step run with a checkpoint and a dumped batch per step."""
    recipe = RECIPES[request.param]
    root = tmp_path_factory.mktemp(request.param)
    # A corpus of its own: the test needs neither the default corpus nor its download.
    words = random.Random(1).choices(["law", "court", "article", "shall", "apply", "member", "state"], k=8000)
    (root / "corpus.txt").write_text(" ".join(words))
    (root / "config.toml").write_text(f'data = "{root}/corpus.txt"\n' + CONFIG + recipe)
    dumps = [arg for step in STEPS for arg in ("--dump-batch", str(step))]
    # One thread: the bits are the same on any count, and a busy machine's cores are not waited on.
    subprocess.run([altgrad_cli, "train", str(root / "config.toml"), "--out", str(root / "run"), *dumps],
                   check=True, capture_output=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    return recipe, root / "run"


def engine_gradients(run, step):
    """name -> the engine's gradient of `step`, from the momentum buffer of its checkpoint (whose
    model file gives each tensor's place in the flat parameter buffer)."""
    checkpoint = run / f"checkpoints/step_{step}"
    buffer = read_safetensors(checkpoint / "optimizer.safetensors")[0]["momentum_buffer"]
    data = (checkpoint / "model.safetensors").read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    out = {}
    for name, entry in header.items():
        begin = entry["data_offsets"][0] // 4
        if begin < buffer.numel():  # lm_head.weight is wte's copy, for nanoGPT
            out[name] = buffer[begin:begin + len(torch.empty(entry["shape"]).view(-1))].reshape(entry["shape"])
    return out


def checkpoint_model(checkpoint):
    model = GPT(json.loads((checkpoint / "config.json").read_text()))
    model.load_state_dict(read_safetensors(checkpoint / "model.safetensors")[0], strict=True)
    return model


def recompute(recipe, run, step, with_state=True):
    """(loss, model with gradients, QuantizedModel) of `step` in PyTorch, from the checkpoint before
    it; with_state=False starts the delayed-scaling points without that checkpoint's amax histories."""
    checkpoint = run / f"checkpoints/step_{step - 1}"
    model = checkpoint_model(checkpoint)
    quantized = (quantize_model(model, recipe, seed=SEED, state=checkpoint) if with_state
                 else quantize_model(model, recipe, seed=SEED, step=step - 1))
    batch = read_safetensors(run / f"batches/step_{step}.safetensors")[0]
    _, loss = model(batch["tokens"][0].long(), batch["targets"][0].long())
    loss.backward()
    return loss.item(), model, quantized


def worst_gradient_error(model, expected):
    return max(((p.grad - expected[n]).norm() / expected[n].norm()).item() for n, p in model.named_parameters())


def engine_metrics(run, step):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()][step - 1]


def min_clean_steps(recipe):
    """Steps of STEPS that a correct recomputation must give without a flip (module docstring)."""
    return 1 if 'match = "h.*.attn.probs"\nrounding = "stochastic"' in recipe else 5


def clean_steps(recipe, run, **options):
    return sum(worst_gradient_error(recompute(recipe, run, step, **options)[1], engine_gradients(run, step)) <= TOLERANCE
               for step in STEPS)


def test_each_step_gives_the_engines_loss_statistics_and_gradients(engine_run):
    recipe, run = engine_run
    errors = []
    for step in STEPS:
        loss, model, quantized = recompute(recipe, run, step)
        metrics = engine_metrics(run, step)
        assert quantized.step == step - 1
        assert abs(loss - metrics["loss"]) <= LOSS_TOLERANCE * metrics["loss"], step
        error = worst_gradient_error(model, engine_gradients(run, step))
        errors.append(error)
        stats = quantized.stats()
        assert set(stats) == set(metrics["quant"])
        if error > TOLERANCE:
            continue  # a flipped element moved this step's later operands: their statistics differ too
        for name, logged in metrics["quant"].items():
            ours = stats[name]
            assert ours["amax"] == pytest.approx(logged["amax"], rel=1e-3), (step, name)
            assert ours["rel_error"] == pytest.approx(logged["rel_error"], rel=2e-2), (step, name)
            assert 100.0 * ours["overflow"] / ours["count"] == pytest.approx(logged["overflow_pct"], abs=0.05), (step, name)
            # Causal probabilities: the mask's zeros are not values, so they count nowhere.
            assert 100.0 * ours["zero_inputs"] / ours["count"] == pytest.approx(logged["zero_in_pct"], abs=0.05), (step, name)
            assert ("colwise" in ours) == ("colwise" in logged), (step, name)
    print(f"worst gradient error per step: {', '.join(f'{e:.1e}' for e in errors)}")
    assert sum(error <= TOLERANCE for error in errors) >= min_clean_steps(recipe)


def test_blocks_along_the_wrong_axis_are_caught(engine_run, monkeypatch):
    recipe, run = engine_run
    if "mx8" not in recipe:
        pytest.skip("per-tensor scaling has no blocking axis")

    def rows_always(self, role, t, forward_copy):
        return forward_copy if self.points[role] is None else self.copy(role, t, along_rows=False)

    monkeypatch.setattr(quantized_model._Matmul, "column_copy", rows_always)
    clean = clean_steps(recipe, run)
    print(f"blocks along the wrong axis: {clean} clean steps")
    assert clean < min_clean_steps(recipe)


def test_another_seed_is_caught(engine_run, monkeypatch):
    recipe, run = engine_run
    if "stochastic" not in recipe:
        pytest.skip("no stochastic rounding")
    monkeypatch.setattr(sys.modules[__name__], "SEED", SEED + 1)
    assert clean_steps(recipe, run) < min_clean_steps(recipe)


def test_delayed_scaling_needs_the_checkpoints_amax_history(engine_run):
    recipe, run = engine_run
    if "fp8-hybrid" not in recipe:
        pytest.skip("no delayed scaling")
    assert clean_steps(recipe, run, with_state=False) < min_clean_steps(recipe)
    # The step's amaxes join the history when the step ends, as the engine records them.
    _, _, quantized = recompute(recipe, run, STEPS[0])
    amax = quantized.stats()["h.0.attn.c_attn:act"]["amax"]
    quantized.next_step()
    history, scale = quantized.delayed_state()["h.0.attn.c_attn:act"]
    assert quantized.step == STEPS[0] and history[-1] == amax and scale == pytest.approx(448.0 / max(history), rel=1e-6)


def small_gpt():
    return GPT({"n_layer": 1, "n_head": 2, "n_embd": 32, "block_size": 8, "vocab_size": 256, "bias": False,
                "norm": "layernorm", "mlp": "gelu", "mlp_hidden": 128, "norm_eps": 1e-5})


def test_an_evaluation_changes_no_state():
    model = small_gpt()
    quantized = quantize_model(model, {"preset": "fp8-hybrid"})
    with torch.no_grad():
        model(torch.zeros(1, 8, dtype=torch.long), torch.zeros(1, 8, dtype=torch.long))
    assert all(s["calls"] == 0 for s in quantized.stats().values())
    quantized.next_step()
    assert all(history == [] for history, _ in quantized.delayed_state().values())


def test_a_dict_recipe_is_the_toml_recipe():
    text = '[quant]\npreset = "mx8"\n[[quant.override]]\nmatch = "h.0.mlp.*"\nformat = "e1m6"\n'
    as_dict = {"preset": "mx8", "override": [{"match": "h.0.mlp.*", "format": "e1m6"}]}
    a, b = quantize_model(small_gpt(), text), quantize_model(small_gpt(), as_dict)
    assert {k: v.as_dict() for k, v in a.points.items()} == {k: v.as_dict() for k, v in b.points.items()}
    assert a.points["h.0.mlp.c_fc:act"].as_dict()["format"] == "e1m6"
    assert not a.points["lm_head:act"].enabled  # the LM head starts off, as in the engine
    assert list(a.points)[:3] == ["h.0.attn.c_attn:act", "h.0.attn.c_attn:weight", "h.0.attn.c_attn:grad"]


@pytest.mark.parametrize("recipe, message", [
    ({"act": {"formt": "e4m3"}}, "recipe: quant: unknown key 'formt' (did you mean 'format'?)"),
    ('[quant]\npreset = "fp9"\n', 'recipe:2: quant: unknown preset "fp9"'),
    ({"override": [{"match": "h.7.*", "format": "e4m3"}]}, 'match = "h.7.*" selects no quantization point'),
    ('[quant]\n[[quant.phase]]\nstart = 5\n', "quantize_model applies one recipe"),
    ({"accumulate": "hopper"}, "GEMM accumulation is emulated by the C++ engine"),
    ({"accumulate": {"attention": "hopper"}}, "GEMM accumulation is emulated by the C++ engine"),
    ({"hadamard": {"gemms": ["wgrad"], "size": 16}}, "hadamard: a GEMM's Hadamard transforms are applied by the C++ engine"),
    ({"override": [{"match": "*:act", "gemm": "wgrad", "enabled": False}]},
     'recipe: gemm = "wgrad": per-GEMM settings give each GEMM of a Linear its own copy in the C++ engine'),
])
def test_bad_recipes_give_the_engines_message(recipe, message):
    with pytest.raises(ValueError) as error:
        quantize_model(small_gpt(), recipe)
    assert message in str(error.value)


def test_attention_operands_under_block_scaling_are_refused():
    with pytest.raises(ValueError, match="h.0.attn.probs: under block scaling"):
        quantize_model(small_gpt(), {"preset": "mx8", "override": [{"match": "h.*.attn.probs"}]})


def test_a_model_off_the_cpu_or_not_float32_is_refused():
    with pytest.raises(ValueError, match="CPU only"):
        quantize_model(small_gpt().to("meta"), {"preset": "mx8"})
    with pytest.raises(TypeError, match="float32"):
        quantize_model(small_gpt().double(), {"preset": "mx8"})
