#pragma once
// Linear layer, as torch.nn.Linear: out = inp · weightᵀ + bias, the GEMMs done by BLAS.
//
//   inp    (N, C)    N = B·T rows
//   weight (OC, C)   [out, in], as nanoGPT stores it
//   bias   (OC)      optional: an empty span means none
//   out    (N, OC)
//
// inp and weight are separate arguments, never assumed to be the stored activation or parameter:
// a quantized run passes fake-quantized copies of both. The backward pass takes each GEMM's
// operands apart (MatmulBackwardOperands), so that each may read copies quantized along its own
// reduction dimension, and the bias gradient the unquantized dout.
#include <cstddef>
#include <span>

#include "ops/operands.hpp"

namespace altgrad::ops::cpu {

// Overwrites out. Throws std::invalid_argument on a size mismatch or a zero dimension.
template <typename Scalar>
void matmul_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::span<const Scalar> weight,
                    std::span<const Scalar> bias, std::size_t N, std::size_t C, std::size_t OC);

// Adds to the gradients: dinp += dout · weight, dweight += doutᵀ · inp, dbias += Σ_rows dout
// (dbias empty: no bias). dout is (N, OC), dinp (N, C), dweight (OC, C), dbias (OC).
template <typename Scalar>
void matmul_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                     std::span<const Scalar> dout, std::span<const Scalar> inp, std::span<const Scalar> weight,
                     std::size_t N, std::size_t C, std::size_t OC);

// The operands of the backward GEMMs, each as that GEMM is to read it: ops/operands.hpp.

template <typename Scalar>
void matmul_backward(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                     const MatmulBackwardOperands<Scalar>& operands, std::size_t N, std::size_t C, std::size_t OC);

// The same with GEMMs under an accumulator model (format/accumulator.hpp) where the EmulatedGemm
// names one, through ops/cpu/emulated_gemm.hpp: the GEMM's result is the model's sum times
// fl32(1/s_a · 1/s_b) (ops/operands.hpp), then the bias is added (forward) or the result is added to
// the gradient (backward), one FP32 addition each; unnamed GEMMs and dbias as above. Float only:
// Scalar = double throws std::invalid_argument.
template <typename Scalar>
void matmul_forward_emulated(std::span<Scalar> out, std::span<const Scalar> inp, std::span<const Scalar> weight,
                             std::span<const Scalar> bias, std::size_t N, std::size_t C, std::size_t OC,
                             const EmulatedGemm& forward);
template <typename Scalar>
void matmul_backward_emulated(std::span<Scalar> dinp, std::span<Scalar> dweight, std::span<Scalar> dbias,
                              const MatmulBackwardOperands<Scalar>& operands, std::size_t N, std::size_t C,
                              std::size_t OC, const EmulatedGemm& dgrad, const EmulatedGemm& wgrad);

}  // namespace altgrad::ops::cpu
