#pragma once
// How a GEMM adds its products: the accumulator model of a recipe's GEMM (docs/accumulation.md).
//
// `fp32` is the engine's float GEMM: exact-operand products summed in FP32 in its fixed order
// (ops/cpu/float_gemm.hpp). Every other model is a tensor core's block fused multiply-add, as
// Hopper's FP8 and BF16 tensor cores compute it (fitted bit for bit to H200 outputs; the numpy
// reference is tests/reference/hopper_accumulator.py):
//   1. products are exact; a product's exponent is the sum of its operands' exponents (an
//      operand's exponent is floor(log2 |x|), at least its format's emin for subnormals);
//   2. every `group` products of K and the running accumulator c are added in one step: each is cut
//      to a multiple of 2^(e_max − bits), e_max the largest exponent among the step's nonzero
//      products and c, the cut terms are added exactly, and the sum is cut to `acc` significant
//      bits; cuts truncate toward zero (`cut = truncate`, the hardware) or round to nearest even;
//   3. every `promote` elements of K (0: never, "fast accumulation") c is added to an FP32 register
//      by one FP32 addition and restarts from zero; the output is that register (or c);
//   4. K is cut into `split` contiguous pieces of whole 128-long k-tiles, each summed as above from
//      zero, and the pieces' results are added in order in FP32 (cuBLAS's split-K).
// With `inputs = bf16` the operands enter as BF16 values (rounded to nearest even), with BF16's
// exponents: the BF16 tensor core. Otherwise they enter as they are, with their format's exponents.
#include <cstddef>
#include <cstdint>
#include <string>
#include <stdexcept>
#include <string_view>

namespace altgrad::format {

class AccumulatorError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct AccumulatorModel {
  enum class Kind : std::uint8_t { fp32, aligned };
  enum class Cut : std::uint8_t { truncate, nearest };
  enum class Inputs : std::uint8_t { format, bf16 };

  Kind kind = Kind::fp32;
  std::size_t group = 32;   // products per block FMA (one MMA step along K)
  int bits = 13;            // fraction bits kept below the step's largest exponent
  int acc = 14;             // significant bits of the accumulator after each step
  Cut cut = Cut::truncate;
  std::size_t promote = 0;  // elements of K between FP32 promotions; 0: none
  std::size_t split = 1;    // pieces of K added in FP32
  Inputs inputs = Inputs::format;

  bool operator==(const AccumulatorModel&) const = default;
  bool emulated() const { return kind != Kind::fp32; }
};

// Hopper (sm_90) as recorded on an H200: the FP8 tensor core with cuBLAS's promotion every 128,
// the same without it (use_fast_accum), and the BF16 tensor core under CUBLAS_COMPUTE_32F.
AccumulatorModel hopper_fp8(bool fast_accumulation);
AccumulatorModel hopper_bf16();

// Limits of the parameterized form: a step's cut terms and their sum stay exact integers in a
// double (kMaxBits + 2 + log2(kMaxGroup + 1) < 53).
inline constexpr std::size_t kMaxGroup = 256;
inline constexpr int kMaxBits = 40;
inline constexpr int kMaxAccBits = 24;  // the accumulator is an FP32 register

// Parses "fp32", "hopper", "hopper_fast", "hopper_bf16" or the parameterized form
// "aligned,group=32,bits=13,acc=14,cut=truncate,promote=128,split=1,inputs=format" (every knob
// optional; the defaults are Hopper's FP8 without promotion). Throws AccumulatorError naming the
// text, the knob and the valid values.
AccumulatorModel parse_accumulator(std::string_view text);
// The name parse_accumulator reads back: a named model where one matches, else the full form.
std::string accumulator_name(const AccumulatorModel& model);

}  // namespace altgrad::format
