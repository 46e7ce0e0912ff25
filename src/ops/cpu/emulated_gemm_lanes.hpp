#pragma once
// The emulated GEMM's fast path (ops/cpu/emulated_gemm.hpp) for the models of 8-bit tensor cores:
// eight float lanes, integer sums, two rows of A against sixteen columns of B at a time. Every
// value it forms is exact (products of operands of at most 12 significant bits, power-of-two
// scalings, step sums below 2^24), so its outputs are the general path's bit for bit; the tests
// hold it to that.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/accumulator.hpp"
#include "ops/cpu/emulated_gemm.hpp"

namespace altgrad::ops::cpu::lanes {

// Whether this build has the fast path and the model fits it: inputs as they are (no BF16
// rounding), and a step's terms and their sum below 2^24.
bool covers(const format::AccumulatorModel& model);

// The operands as the fast path reads them. pack() returns false (and the caller takes the
// general path) where an operand value has more than 12 significant bits or an exponent beyond
// ±40, or is not finite.
struct Packs {
  std::vector<float> a_value;           // (rows rounded up to 2, k)
  std::vector<std::int8_t> a_exponent;  // (rows rounded up to 2, k rounded up to 2)
  std::vector<float> b_value;           // per 16-column panel: (k, 16)
  std::vector<std::int8_t> b_exponent;  // per panel: (k rounded up to 2) / 2 pairs of k, (16, 2)
};
bool pack(const EmulatedOperand& a, const EmulatedOperand& b, std::size_t m, std::size_t n, std::size_t k,
          Packs& packs);

// sums (m, n): each output's FP32 result under the model (before alpha), for packs made by pack().
void run(const format::AccumulatorModel& model, const Packs& packs, std::size_t m, std::size_t n, std::size_t k,
         float* sums);

}  // namespace altgrad::ops::cpu::lanes
