// The vector kernel against the portable one it must reproduce: the same output bits, the same
// counts and amax, and sums that agree to their last few bits, on every simple-grid format, at
// scales with and without an exact reciprocal, on random bit patterns (NaN, Inf and float32
// subnormals included), on values spread over each format's range, and with every special value
// planted at every lane of a vector. A vector holding a value the vector kernel does not round
// itself goes to the portable kernel whole, so these also check the hand-over at every position
// and length.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/special_floats.hpp"
#include "determinism.hpp"
#include "format/codec.hpp"
#include "quant/quantize.hpp"
#include "quant/vector_kernel.hpp"
#include "quant/vector_kernel_lanes.hpp"
#include "reference_grid.hpp"
#include "reference_stats.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {
namespace {

using test_support::kInf;
using test_support::kNan;

using format::Rounding;


// Every named format with a simple grid, and generic ones that vary bias, policy and overflow.
const char* const kFormats[] = {"e4m3",     "e4m3fnuz", "e5m2",  "e5m2fnuz", "e3m4",         "e2m5",
                                "e1m6",     "e7m0",     "e2m3",  "e3m2",     "e2m1",         "bf16",
                                "fp16",     "e4m3,bias=8", "e5m2,overflow=inf", "e6m1", "e3m4,overflow=inf",
                                "e6m0fn,bias=30"};
const float kKernelScales[] = {1.0f, 0.37f, 0x1p-10f, 1000.0f, 0x1p20f, 3.0e-20f};
constexpr Rounding kRoundings[] = {Rounding::nearest_even, Rounding::stochastic};

// Random float32 bit patterns: every exponent, NaN and Inf included.
std::vector<float> random_bits(std::size_t n, std::uint32_t seed) {
  TensorRng rng(seed);
  std::vector<float> x(n);
  for (float& v : x) v = std::bit_cast<float>(rng.word());
  return x;
}

// Values spread over the format's grid as the scale sees it, from far below the smallest
// subnormal to past max finite.
std::vector<float> spread_values(const format::Format& f, float scale, std::size_t n, std::uint32_t seed) {
  const int low = std::ilogb(f.min_positive()) - 6, high = std::ilogb(f.max_finite()) + 2;
  std::vector<float> x = log_uniform_tensor(n, seed, low, high);
  for (float& v : x) v /= scale;
  return x;
}

// Every midpoint between adjacent positive codes (the ties of nearest-even) and the floats on
// either side of it, both signs, divided by the scale; formats wider than 8 bits every 97th code.
std::vector<float> midpoints(const format::Format& f, float scale) {
  std::vector<float> x;
  const std::uint32_t stride = f.width > 8 ? 97 : 1;
  const std::uint32_t positive_codes = f.code_count() >> 1;
  for (std::uint32_t code = 0; code + stride < positive_codes; code += stride) {
    const double lo = format::decode(f, code), hi = format::decode(f, code + 1);
    if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
    const auto mid = static_cast<float>((lo + hi) / 2);
    for (float m : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf)}) x.insert(x.end(), {m / scale, -m / scale});
  }
  return x;
}

std::vector<std::uint32_t> words_for(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint32_t> words(n);
  quant::fill_random(seed, 1, 0, words);
  return words;
}

// Both kernels' outputs and statistics: the same bits, counts and amax, and sums within 1e-12.
::testing::AssertionResult results_agree(const std::vector<float>& vector_out, const std::vector<float>& portable_out,
                                         const quant::QuantStats& v, const quant::QuantStats& p) {
  if (auto same = bit_identical(vector_out, portable_out); !same) return same;
  if (v.count != p.count || v.overflow != p.overflow || v.underflow != p.underflow ||
      v.nan_inputs != p.nan_inputs || v.inf_inputs != p.inf_inputs || v.zero_inputs != p.zero_inputs ||
      std::bit_cast<std::uint32_t>(v.amax) != std::bit_cast<std::uint32_t>(p.amax)) {
    return ::testing::AssertionFailure() << "counts differ: vector count " << v.count << " overflow " << v.overflow
                                         << " underflow " << v.underflow << " nan " << v.nan_inputs << " inf "
                                         << v.inf_inputs << " amax " << v.amax << "; portable " << p.count << ' '
                                         << p.overflow << ' ' << p.underflow << ' ' << p.nan_inputs << ' '
                                         << p.inf_inputs << ' ' << p.amax;
  }
  if (auto close = close_relative(v.sum_sq_error, p.sum_sq_error, 1e-12); !close) return close << " (sum_sq_error)";
  return close_relative(v.sum_sq_input, p.sum_sq_input, 1e-12) << " (sum_sq_input)";
}

// Runs both kernels on x and compares everything they return.
::testing::AssertionResult kernels_agree(const format::Format& f, Rounding r, const std::vector<float>& x,
                                         float scale) {
  const auto words = words_for(x.size(), 7);
  std::vector<float> vector_out(x.size()), portable_out(x.size());
  quant::QuantStats v, p;
  quant::quantize_block_vector(f, r, x.data(), vector_out.data(), x.size(), scale, words.data(), v);
  quant::quantize_block_portable(f, r, x.data(), portable_out.data(), x.size(), scale, words.data(), p);
  return results_agree(vector_out, portable_out, v, p);
}

class VectorKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!quant::has_vector_kernel(load("e4m3"), Rounding::nearest_even)) {
      GTEST_SKIP() << "this build has no vector kernel (it needs AVX-512 or AVX2: a -march=native build on such a CPU)";
    }
  }
};

// Both kernels, AVX-512's and AVX2's, take both roundings on every simple grid, powers of two
// (e7m0, e6m0fn) included.
TEST_F(VectorKernel, AppliesToNearestAndStochasticOnSimpleGrids) {
  for (const char* name : kFormats) {
    const format::Format f = load(name);
    EXPECT_TRUE(quant::has_vector_kernel(f, Rounding::nearest_even)) << name;
    EXPECT_TRUE(quant::has_vector_kernel(f, Rounding::stochastic)) << name;
    EXPECT_FALSE(quant::has_vector_kernel(f, Rounding::toward_zero)) << name;
    EXPECT_FALSE(quant::has_vector_kernel(f, Rounding::stochastic_equal)) << name;
  }
  EXPECT_FALSE(quant::has_vector_kernel(load("e8m0fnu"), Rounding::nearest_even));
  EXPECT_FALSE(quant::has_vector_kernel(load("e5m2,subnormals=off"), Rounding::nearest_even));
}

// Scales through which max finite does not come back finite, where the portable kernel takes over.
TEST_F(VectorKernel, MatchesThePortableKernelAtScalesWhoseWayBackOverflows) {
  for (float scale : {0.0f, 1e-37f, kNan, kInf, -0.37f}) {
    for (Rounding r : kRoundings) {
      EXPECT_TRUE(kernels_agree(load("e4m3"), r, random_bits(999, 13), scale)) << "scale " << scale;
    }
  }
}

// Random bit patterns, and values spread over each format's range, for every format and scale.
TEST_F(VectorKernel, MatchesThePortableKernelOnRandomBitsAndAcrossEachFormatsRange) {
  for (const char* name : kFormats) {
    const format::Format f = load(name);
    for (float scale : kKernelScales) {
      for (Rounding r : kRoundings) {
        SCOPED_TRACE(::testing::Message() << name << " scale " << scale << " rounding " << format::rounding_name(r));
        EXPECT_TRUE(kernels_agree(f, r, random_bits(4099, 11), scale));
        EXPECT_TRUE(kernels_agree(f, r, spread_values(f, scale, 20000, 5), scale));
      }
    }
  }
}

TEST_F(VectorKernel, MatchesThePortableKernelOnEveryTie) {
  for (const char* name : kFormats) {
    const format::Format f = load(name);
    for (float scale : {1.0f, 0x1p-3f, 0.37f}) {
      for (Rounding r : kRoundings) {
        SCOPED_TRACE(::testing::Message() << name << " scale " << scale << " rounding " << format::rounding_name(r));
        EXPECT_TRUE(kernels_agree(f, r, midpoints(f, scale), scale));
      }
    }
  }
}

// Stochastic rounding goes up when the word is below the distance to the lower neighbour taken to
// 32 bits: words just below, at and just above that threshold, computed here in long double from
// the grid neighbours, for values across the range (subnormal steps included).
TEST_F(VectorKernel, StochasticRoundingAgreesAtTheThresholdWord) {
  for (const char* name : {"e4m3", "e5m2", "e1m6", "e7m0", "e4m3fnuz", "bf16"}) {
    const format::Format f = load(name);
    std::vector<float> x;
    std::vector<std::uint32_t> words;
    for (float v : spread_values(f, 1.0f, 3000, 17)) {
      const float a = std::fabs(v);
      const long double lo = format::round_value(f, Rounding::toward_zero, a);
      const long double hi = format::round_value(f, Rounding::toward_positive, a);
      if (!(a <= f.max_finite()) || lo == hi) continue;
      const auto threshold = static_cast<std::uint64_t>(std::floor((a - lo) / (hi - lo) * 0x1p32L));
      for (std::uint64_t w : {threshold - 1, threshold, threshold + 1}) {
        if (w > 0xFFFF'FFFFu) continue;
        x.push_back(v);
        words.push_back(static_cast<std::uint32_t>(w));
      }
    }
    std::vector<float> vector_out(x.size()), portable_out(x.size());
    quant::QuantStats vs, ps;
    quant::quantize_block_vector(f, Rounding::stochastic, x.data(), vector_out.data(), x.size(), 1.0f, words.data(), vs);
    quant::quantize_block_portable(f, Rounding::stochastic, x.data(), portable_out.data(), x.size(), 1.0f, words.data(), ps);
    EXPECT_TRUE(bit_identical(vector_out, portable_out)) << name;
    EXPECT_GT(x.size(), 6000u) << name;
  }
}

// One special value at each lane of a vector, in arrays of every length around a vector's: NaN and
// Inf, a product beyond float32 (handed over), and values beyond max finite, which the vector kernel
// saturates itself under e4m3 and hands over under an overflow=inf format.
TEST_F(VectorKernel, AgreesWithASpecialValueAtEveryLaneAndLength) {
  const float specials[] = {kNan, kInf, -kInf, std::numeric_limits<float>::max(), 1000.0f, -3e4f};
  for (const char* name : {"e4m3", "e5m2,overflow=inf"}) {
    const format::Format f = load(name);
    for (Rounding r : kRoundings) {
      for (std::size_t n = 0; n <= 48; ++n) {
        for (float special : specials) {
          for (std::size_t at = 0; at < n; ++at) {
            std::vector<float> x = spread_values(f, 2.0f, n, static_cast<std::uint32_t>(n));
            x[at] = special;
            ASSERT_TRUE(kernels_agree(f, r, x, 2.0f)) << name << " n " << n << " special " << special << " at " << at;
          }
        }
      }
    }
  }
}

// The AVX2 kernel's MX blocks test their exponent against largest_finite_exponent() instead of
// calling outputs_stay_finite() on the scale: the two agree at every E8M0 exponent of every format.
TEST(VectorKernelLanes, LargestFiniteExponentAgreesWithOutputsStayFinite) {
  for (const char* name : kFormats) {
    const format::Format f = load(name);
    const int largest = quant::vector_lanes::largest_finite_exponent(f);
    for (int k = -127; k <= 127; ++k) {
      EXPECT_EQ(k <= largest, quant::vector_lanes::outputs_stay_finite(f, format::exp2_exact(-k))) << name << ", k = " << k;
    }
  }
}

// MX's form: one shared exponent per block, blocks of any length, the last one short; exponents
// from E8M0's whole range (at the ends of which the portable kernel takes a block over).
TEST_F(VectorKernel, ScaledBlocksMatchThePortableKernelBlockByBlock) {
  for (const char* name : {"e4m3", "e2m1", "e5m2,overflow=inf", "e4m3fnuz"}) {
    const format::Format f = load(name);
    for (std::size_t block : {1u, 7u, 16u, 32u, 33u}) {
      for (Rounding r : kRoundings) {
        SCOPED_TRACE(::testing::Message() << name << " block " << block << " rounding " << format::rounding_name(r));
        const std::size_t n = 40 * block + block / 2;
        const auto x = random_bits(n, static_cast<std::uint32_t>(block));
        const auto words = words_for(n, 5);
        TensorRng rng(static_cast<std::uint32_t>(block) + 1);
        std::vector<int> exponents((n + block - 1) / block);
        for (int& k : exponents) k = rng.integer(-127, 127);
        std::vector<float> vector_out(n), portable_out(n);
        std::vector<std::uint64_t> vector_overflows(exponents.size()), portable_overflows(exponents.size());
        quant::QuantStats v, p;
        quant::quantize_scaled_blocks_vector(f, r, x.data(), vector_out.data(), n, block, exponents.data(),
                                             words.data(), vector_overflows.data(), v, n);
        quant::quantize_scaled_blocks_portable(f, r, x.data(), portable_out.data(), n, block, exponents.data(),
                                               words.data(), portable_overflows.data(), p);
        EXPECT_TRUE(results_agree(vector_out, portable_out, v, p));
        EXPECT_EQ(vector_overflows, portable_overflows);
        EXPECT_GT(p.overflow, 0u);
      }
    }
  }
}

// The kernel's vectors start on 64-byte boundaries of the input, so which elements share a vector
// (and which vectors go to the portable kernel) depends on where the array starts; nothing it
// returns may. Every start within a cache line, for the input and the output apart, on random bits
// (specials, hence hand-overs, included) and at lengths that end inside the first vector.
TEST_F(VectorKernel, ResultsDoNotDependOnWhereTheArraysStart) {
  constexpr std::size_t kLine = 16;  // floats per 64-byte line
  const auto at_offset = [](std::vector<float>& storage, std::size_t offset) {
    const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
    return storage.data() + (kLine - address % 64 / sizeof(float)) % kLine + offset;
  };
  for (const char* name : {"e4m3", "e5m2,overflow=inf", "e7m0", "bf16"}) {
    const format::Format f = load(name);
    for (Rounding r : kRoundings) {
      for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{16}, std::size_t{33}, std::size_t{1000}}) {
        // Random bits and, where the order of the sums shows in their last bits, values of one scale.
        for (const auto& x : {random_bits(n, 11), spread_values(f, 0.37f, n, 12)}) {
        const auto words = words_for(n, 5);
        std::vector<float> reference_out;
        quant::QuantStats reference;
        for (std::size_t in_offset = 0; in_offset < kLine; ++in_offset) {
          for (std::size_t out_offset : {in_offset, (in_offset + 5) % kLine}) {
            std::vector<float> in_storage(n + 2 * kLine), out_storage(n + 2 * kLine);
            float* in = at_offset(in_storage, in_offset);
            float* out = at_offset(out_storage, out_offset);
            std::copy(x.begin(), x.end(), in);
            quant::QuantStats stats;
            quant::quantize_block_vector(f, r, in, out, n, 0.37f, words.data(), stats);
            const std::vector<float> result(out, out + n);
            if (reference_out.empty()) {
              reference_out = result;
              reference = stats;
              continue;
            }
            SCOPED_TRACE(std::string(name) + " n=" + std::to_string(n) + " input at +" + std::to_string(in_offset) +
                         ", output at +" + std::to_string(out_offset));
            EXPECT_TRUE(bit_identical(result, reference_out));
            expect_stats_bit_identical(stats, reference);
          }
        }
        }
      }
    }
  }
}

TEST_F(VectorKernel, InPlaceEqualsOutOfPlace) {
  for (const char* name : {"e4m3", "e4m3fnuz", "e7m0", "bf16"}) {
    const format::Format f = load(name);
    for (Rounding r : kRoundings) {
      const auto x = random_bits(1000, 3);
      const auto words = words_for(x.size(), 9);
      std::vector<float> out(x.size()), in_place = x;
      quant::QuantStats a, b;
      quant::quantize_block_vector(f, r, x.data(), out.data(), x.size(), 0.37f, words.data(), a);
      quant::quantize_block_vector(f, r, in_place.data(), in_place.data(), x.size(), 0.37f, words.data(), b);
      EXPECT_TRUE(bit_identical(out, in_place)) << name;
      EXPECT_EQ(a.count, b.count);
      EXPECT_EQ(a.underflow, b.underflow);
      EXPECT_EQ(a.sum_sq_error, b.sum_sq_error);
    }
  }
}

}  // namespace
}  // namespace altgrad::quant_test
