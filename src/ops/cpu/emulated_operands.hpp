#pragma once
// How the CPU kernels hand an EmulatedGemm's operands (ops/operands.hpp) to the emulated GEMM
// (ops/cpu/emulated_gemm.hpp): the Linear's GEMMs (ops/cpu/matmul.cpp) and the attention's forward
// products (ops/cpu/attention.cpp) read their copies the same way and apply the same scales.
#include <cstddef>
#include <stdexcept>
#include <type_traits>

#include "ops/cpu/emulated_gemm.hpp"
#include "ops/operands.hpp"

namespace altgrad::ops::cpu {

// An operand of an emulated GEMM: element (r, c) at data[r · row_stride + c · col_stride]. Its
// least exponent is its grid's emin, or FP32's for a copy without one.
inline EmulatedOperand emulated_operand(const float* data, std::size_t row_stride, std::size_t col_stride,
                                        const GridOperand& grid) {
  constexpr int kFloatEmin = -126;
  return {data, row_stride, col_stride, grid.format ? grid.format->min_normal_exp : kFloatEmin, grid.format,
          grid.scale};
}

// cuBLASLt's alpha for FP8 operands: the two dequantization scales 1/s, each rounded to FP32
// (Transformer Engine's scale_inv), multiplied in FP32.
inline float dequantization(const EmulatedGemm& g) { return (1.0f / g.a.scale) * (1.0f / g.b.scale); }

// The emulated GEMM reads floats: a double kernel under a model is a caller's mistake.
template <typename Scalar>
void require_float() {
  if constexpr (!std::is_same_v<Scalar, float>) {
    throw std::invalid_argument("emulated GEMM accumulation takes float operands, not double");
  }
}

}  // namespace altgrad::ops::cpu
