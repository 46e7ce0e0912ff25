#pragma once
// Linear layer on the GPU; the meaning, shapes and checks of ops/cpu/matmul.hpp:
//   out (N, OC) = inp (N, C) · weight (OC, C)ᵀ + bias (OC, or empty)
// The GEMMs are cuBLASLt's in true FP32 (ops/cuda/gemm.hpp): the same bits run to run, not the
// CPU's. The bias and its gradient are the CPU's bits.
#include <cstddef>
#include <span>

#include "ops/cuda/gemm.hpp"
#include "ops/operands.hpp"

namespace altgrad::ops::cuda {

// Overwrites out. Throws std::invalid_argument on a size mismatch or a zero dimension.
void matmul_forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                    std::span<const float> bias, std::size_t N, std::size_t C, std::size_t OC, Gemm& gemm);

// Adds to the gradients, each product reading its own operands:
//   dinp += dout_dinp · weight,   dweight += dout_dweightᵀ · inp,   dbias += Σ_rows dout_dbias
// (dbias empty: no bias).
void matmul_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     const MatmulBackwardOperands<float>& operands, std::size_t N, std::size_t C, std::size_t OC,
                     Gemm& gemm);

}  // namespace altgrad::ops::cuda
