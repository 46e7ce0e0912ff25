#pragma once
// A GEMM whose sums are a tensor core's: C = alpha · A·B under an aligned accumulator model
// (format/accumulator.hpp), bit for bit, on the CPU.
//
// Each output's sum runs over K in the model's steps from a zero accumulator; an output is the
// FP32 value the model leaves (promotion register, split-K sum). Then, as cuBLASLt applies FP8
// scales: out = fl32(alpha · sum), alpha being the product of the two operands' dequantization
// scales rounded once to FP32 by the caller; and C = out, or C = fl32(C + out) when `add`.
//
// A row of A or a column of B that holds a NaN or an infinity makes its outputs the IEEE sum of
// the products in double (NaN where a product is NaN or infinities of both signs meet, else the
// infinity), then alpha: tensor cores propagate non-finite operands, and how exactly is outside
// the recorded data.
//
// Outputs are independent of each other, so the bits are the same on any thread count.
#include <cstddef>

#include "format/accumulator.hpp"
#include "format/spec.hpp"

namespace altgrad::ops::cpu {

// An operand as a strided matrix: element (r, c) at data[r · row_stride + c · col_stride], and the
// least exponent its values take (its format's emin: subnormals count as emin; -126 for FP32).
// With `grid`, the values are a fake-quantized copy x̂ = Q(x·scale)/scale, and the tensor core's
// operand is Q(x·scale), recovered as x̂·scale rounded to the grid (ops/operands.hpp).
struct EmulatedOperand {
  const float* data;
  std::size_t row_stride;
  std::size_t col_stride;
  int emin;
  const format::Format* grid = nullptr;
  float scale = 1.0f;
};

// A is (m, k), B is (k, n), C is (m, n) row-major with leading dimension ldc. Throws
// std::invalid_argument for an fp32 model (the float GEMM is that one). Takes the fast path
// (ops/cpu/emulated_gemm_lanes.hpp) where it applies, else the general one.
void emulated_gemm(const format::AccumulatorModel& model, std::size_t m, std::size_t n, std::size_t k,
                   const EmulatedOperand& a, const EmulatedOperand& b, float alpha, bool add, float* c,
                   std::size_t ldc);

// x rounded to BF16, nearest even (NaN stays NaN): how BF16 inputs enter, and a BF16 output.
float round_to_bf16(float x);

// The general path, which computes every model in doubles: the definition the fast path is held to.
void emulated_gemm_general(const format::AccumulatorModel& model, std::size_t m, std::size_t n, std::size_t k,
                           const EmulatedOperand& a, const EmulatedOperand& b, float alpha, bool add, float* c,
                           std::size_t ldc);

}  // namespace altgrad::ops::cpu
