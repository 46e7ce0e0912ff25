#pragma once
// Residual connection: out = a + b, elementwise over any shape (n elements).
#include <span>

namespace altgrad::ops::cpu {

// Overwrites out; out may alias a or b (x += f(x) in place).
template <typename Scalar>
void residual_forward(std::span<Scalar> out, std::span<const Scalar> a, std::span<const Scalar> b);

// Adds dout to both da and db: the gradient flows unchanged down the skip path and the branch.
// da and db may be the same buffer (it then gets 2·dout); neither may alias dout.
template <typename Scalar>
void residual_backward(std::span<Scalar> da, std::span<Scalar> db, std::span<const Scalar> dout);

}  // namespace altgrad::ops::cpu
