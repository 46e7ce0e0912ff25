#pragma once
// SwiGLU gate (Shazeer 2020, "GLU Variants Improve Transformer"), as in LLaMA's MLP:
//   out = silu(a) ⊙ b,   silu(a) = a · sigmoid(a)
//
//   inp (N, 2H)   each row is [a (H) | b (H)]: the first half is the gate that goes through silu,
//                 the second half the value it scales. One up-projection with 2H outputs produces
//                 this row directly; LLaMA's w1 (gate) and w3 (up) are its first and second halves.
//   out (N, H)
#include <cstddef>
#include <span>

namespace altgrad::ops::cpu {

// Overwrites out.
template <typename Scalar>
void swiglu_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::size_t N, std::size_t H);

// Overwrites dinp (N, 2H): da = dout · b · silu'(a), db = dout · silu(a).
template <typename Scalar>
void swiglu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout, std::size_t N,
                     std::size_t H);

}  // namespace altgrad::ops::cpu
