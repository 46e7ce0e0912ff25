"""altgrad.torch.fake_quant: the engine's quantizer in the forward pass, the gradient unchanged."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import altgrad  # noqa: E402
from altgrad.torch import fake_quant  # noqa: E402


def test_forward_is_the_engines_quantizer_and_backward_passes_straight_through():
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(1)) * 10
    t = x.clone().requires_grad_(True)
    y, stats = fake_quant(t, "e4m3", scaling="block", return_stats=True)
    want, want_stats = altgrad.quantize(x.numpy(), "e4m3", scaling="block")
    assert np.array_equal(y.detach().numpy(), want)
    assert stats == want_stats
    upstream = torch.randn(4, 64, generator=torch.Generator().manual_seed(2))
    y.backward(upstream)
    assert torch.equal(t.grad, upstream)


def test_stochastic_rounding_follows_the_seed():
    t = torch.full((1000,), 1.1)
    a, b = fake_quant(t, "e4m3", rounding="stochastic", seed=3), fake_quant(t, "e4m3", rounding="stochastic", seed=3)
    assert torch.equal(a, b) and not torch.equal(a, fake_quant(t, "e4m3", rounding="stochastic", seed=4))


@pytest.mark.parametrize("tensor,kind,text", [
    (lambda: torch.empty(3, device="meta"), ValueError, "CPU only"),
    (lambda: torch.zeros(3, dtype=torch.float64), TypeError, "float32"),
])
def test_errors_name_the_problem(tensor, kind, text):
    with pytest.raises(kind, match=text):
        fake_quant(tensor(), "e4m3")
