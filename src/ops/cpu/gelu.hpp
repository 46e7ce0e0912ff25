#pragma once
// GELU, exact erf form (torch.nn.GELU() default, which nanoGPT's MLP uses; not the tanh
// approximation of GPT-2 and llm.c):
//   gelu(x) = x · Φ(x) = x/2 · (1 + erf(x/√2))
//   gelu'(x) = Φ(x) + x · φ(x),   φ(x) = exp(−x²/2) / √(2π)
//
//   inp, out (n) elementwise, any shape
#include <span>

namespace altgrad::ops::cpu {

// Overwrites out; out may alias inp.
template <typename Scalar>
void gelu_forward(std::span<Scalar> out, std::span<const Scalar> inp);

// Overwrites dinp with dout · gelu'(inp).
template <typename Scalar>
void gelu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout);

}  // namespace altgrad::ops::cpu
