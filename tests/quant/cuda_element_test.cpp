// The GPU quantizer's per-element and per-block arithmetic (quant/cuda/element_quantize.hpp,
// block_exponent.hpp, random_quad.hpp: ALTGRAD_HD, so the host compiles them too) against the CPU
// quantizer, on any machine: the device twins of host-only quant/ functions equal their originals,
// and the kernels' composition of them, replayed on one host thread quad by quad and block by block
// as the kernels walk the data, gives quant::quantize's and quant::quantize_mx's output bits (and
// quantize_block_portable's, the definition) and exact statistics for every named format, rounding
// and scale. tests/quant/cuda_quantize_parity_test.cpp then holds the kernels themselves to the
// same, on a GPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "device_parity.hpp"
#include "format/bits.hpp"
#include "format/codec.hpp"
#include "quant/cuda/block_exponent.hpp"
#include "quant/cuda/element_quantize.hpp"
#include "quant/cuda/random_quad.hpp"
#include "quant/mx.hpp"
#include "quant/quantize.hpp"
#include "quant/random_words.hpp"
#include "quant/scaled_input.hpp"
#include "support/bit_identical.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {
namespace {

using format::Rounding;
using quant::cuda::ElementStats;
using quant::cuda::QuantizedElement;
using quant::cuda::Unscale;
using test_support::bit_identical;

quant::QuantStats quant_stats(const ElementStats& s, std::size_t count) {
  quant::QuantStats q;
  q.count = count;
  q.overflow = s.overflow;
  q.underflow = s.underflow;
  q.nan_inputs = s.nan_inputs;
  q.inf_inputs = s.inf_inputs;
  q.zero_inputs = s.zero_inputs;
  q.amax = format::bits_float(s.amax_bits);
  q.sum_sq_error = s.sum_sq_error;
  q.sum_sq_input = s.sum_sq_input;
  return q;
}

// Elements [begin, end) of `in`, four at a time from begin as a kernel's thread takes them, each
// quad drawing the words of first_index + i .. + 3; the block's overflow events OR-ed into
// `overflowed`.
template <Rounding R>
void quantize_quads(const format::Format& f, const float* in, float* out, std::size_t begin, std::size_t end,
                    float scale, std::uint64_t seed, std::uint64_t stream, std::uint64_t first_index,
                    ElementStats& stats, std::uint32_t& overflowed) {
  const Unscale unscale = Unscale::for_scale(scale);
  const bool simple = format::has_simple_grid(f);
  for (std::size_t i = begin; i < end; i += 4) {
    std::uint32_t words[4] = {};
    if constexpr (format::is_stochastic(R)) quant::cuda::random_quad(seed, stream, first_index + i, words);
    for (std::size_t j = 0; j < 4 && i + j < end; ++j) {
      const QuantizedElement q = quant::cuda::quantize_element<R>(f, simple, in[i + j], scale, unscale, words[j]);
      out[i + j] = q.value;
      stats.add(in[i + j], q);
      overflowed |= q.overflow;
    }
  }
}

// The per-tensor kernel's arithmetic on one host thread.
quant::QuantStats replay_tensor(const format::Format& f, const std::vector<float>& in, std::vector<float>& out,
                                const quant::QuantizeOptions& o) {
  ElementStats stats;
  std::uint32_t overflowed = 0;
  with_rounding(o.rounding, [&](auto r) {
    quantize_quads<decltype(r)::value>(f, in.data(), out.data(), 0, in.size(), o.scale, o.seed, o.stream, o.first_index,
                                       stats, overflowed);
  });
  return quant_stats(stats, in.size());
}

// The MX kernel's arithmetic on one host thread: per block, the largest finite magnitude, the
// exponent, the quads at 2^−k.
quant::MxStats replay_mx(const format::Format& f, const std::vector<float>& in, std::vector<float>& out,
                         std::size_t row_length, const quant::MxOptions& o, std::vector<std::uint8_t>& codes) {
  ElementStats stats;
  quant::MxStats mx;
  for (std::size_t row = 0; row < in.size(); row += row_length) {
    for (std::size_t begin = row; begin < row + row_length; begin += o.block_size) {
      const std::size_t end = std::min(begin + o.block_size, row + row_length);
      std::uint32_t amax = 0;
      for (std::size_t i = begin; i < end; ++i) amax = std::max(amax, quant::cuda::finite_magnitude_bits(in[i]));
      const int k = quant::cuda::block_shared_exponent(f, format::bits_float(amax), o.rule);
      codes.push_back(static_cast<std::uint8_t>(k + quant::cuda::kE8m0Bias));
      std::uint32_t overflowed = 0;
      with_rounding(o.rounding, [&](auto r) {
        quantize_quads<decltype(r)::value>(f, in.data(), out.data(), begin, end, format::exp2_exact(-k), o.seed,
                                           o.stream, o.first_index, stats, overflowed);
      });
      ++mx.blocks;
      mx.clipped_blocks += overflowed;
    }
  }
  mx.elements = quant_stats(stats, in.size());
  return mx;
}

// Unscale's reciprocal path is taken exactly where dividing by the scale and multiplying by its
// reciprocal agree.
TEST(DeviceQuantizerElement, PowerOfTwoScalesGoBackByTheirExactReciprocal) {
  std::vector<float> scales = {0.0f, -1.0f, 0.37f, 3.0f, std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  for (int e = -149; e <= 127; ++e) {
    const float p = std::ldexp(1.0f, e);
    scales.insert(scales.end(), {p, std::nextafter(p, 0.0f), std::nextafter(p, 1e30f), -p});
  }
  for (const float s : scales) {
    EXPECT_EQ(Unscale::for_scale(s).by_inverse, quant::is_power_of_two_scale(s)) << std::hexfloat << s;
    if (!quant::is_power_of_two_scale(s)) continue;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(Unscale::for_scale(s).inverse), std::bit_cast<std::uint32_t>(1.0f / s));
  }
}

// The words of quads at every offset within a Philox group, and across the carry of the group
// counter's low word into its high one.
TEST(DeviceQuantizerElement, RandomQuadDrawsTheCpusWords) {
  constexpr std::uint64_t kSeed = 0x0123'4567'89AB'CDEFull, kStream = 0xFEDC'BA98'7654'3210ull;
  for (const std::uint64_t base : {std::uint64_t{0}, (std::uint64_t{1} << 34) - 40, std::uint64_t{1} << 40}) {
    std::vector<std::uint32_t> want(80);
    quant::fill_random(kSeed, kStream, base, want);
    for (std::uint64_t i = 0; i + 4 <= want.size(); ++i) {
      std::uint32_t words[4];
      quant::cuda::random_quad(kSeed, kStream, base + i, words);
      for (std::size_t j = 0; j < 4; ++j) ASSERT_EQ(words[j], want[i + j]) << "index " << base + i + j;
    }
  }
}

// Amaxes at and beside every power of two and every power-of-two multiple of max finite (where
// round_up's comparison flips), float32 subnormals, random ones, and those that give k = 0.
TEST(DeviceQuantizerElement, BlockExponentTwinMatchesTheCpu) {
  TensorRng rng(11);
  for (const std::string& name : parity_format_names()) {
    const format::Format f = parity_format(name);
    std::vector<float> amaxes = {0.0f, -0.0f, -1.0f, std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max()};
    for (int e = -149; e <= 127; ++e) {
      for (const float v : {std::ldexp(1.0f, e), std::ldexp(f.max_finite(), e - std::ilogb(f.max_finite()))}) {
        if (!(v > 0.0f) || !std::isfinite(v)) continue;
        amaxes.insert(amaxes.end(), {v, std::nextafter(v, 0.0f), std::nextafter(v, 1e38f)});
      }
    }
    for (int i = 0; i < 3000; ++i) amaxes.push_back(std::fabs(rng.log_uniform(-149, 127)));
    // EVEN's threshold significand 2 − 2^−(m+1) and its neighbours.
    const float even = 2.0f - std::ldexp(1.0f, -(f.spec.mantissa_bits + 1));
    amaxes.insert(amaxes.end(), {even, std::nextafter(even, 0.0f), std::nextafter(even, 2.0f)});
    for (const quant::MxScaleRule rule : {quant::MxScaleRule::floor, quant::MxScaleRule::round_up,
                                          quant::MxScaleRule::ceil, quant::MxScaleRule::even}) {
      for (const float amax : amaxes) {
        ASSERT_EQ(quant::cuda::block_shared_exponent(f, amax, rule), quant::mx_shared_exponent(f, amax, rule))
            << name << std::hexfloat << ", amax " << amax << ", rule " << static_cast<int>(rule);
      }
    }
  }
}

// Every format, rounding and scale, against quant::quantize (a vector kernel where this build has
// one) and quantize_block_portable, the definition. first_index is not a multiple of 4, so the
// quads straddle Philox groups, and n is not a multiple of 4.
TEST(DeviceQuantizerElement, PerTensorPathMatchesTheCpuBitForBit) {
  constexpr std::size_t kN = 1027;
  for (const std::string& name : parity_format_names()) {
    const format::Format f = parity_format(name);
    for (const float scale : kParityScales) {
      const std::vector<float> in = tensor_inputs(f, scale, kN, 5);
      for (const Rounding rounding : format::kAllRoundings) {
        quant::QuantizeOptions o;
        o.rounding = rounding;
        o.scale = scale;
        o.seed = 0xC0FFEE;
        o.stream = 9;
        o.first_index = 4 * 1000 + 3;
        const std::string where = describe_case(name, rounding, "scale " + std::to_string(scale));
        std::vector<float> cpu(kN), portable(kN), replayed(kN);
        const quant::QuantStats cpu_stats = quant::quantize(f, in, cpu, o);
        std::vector<std::uint32_t> words(kN);
        quant::fill_random(o.seed, o.stream, o.first_index, words);
        quant::QuantStats portable_stats;
        quant::quantize_block_portable(f, rounding, in.data(), portable.data(), kN, scale, words.data(),
                                       portable_stats);
        const quant::QuantStats replayed_stats = replay_tensor(f, in, replayed, o);
        ASSERT_TRUE(bit_identical(replayed, cpu)) << where;
        ASSERT_TRUE(bit_identical(replayed, portable)) << where;
        expect_same_stats(replayed_stats, cpu_stats, where);
        expect_same_stats(replayed_stats, portable_stats, where);
      }
    }
  }
}

// Every format, rounding and rule against quant::quantize_mx: rows that are not a multiple of the
// block (a short last block), blocks of OCP's 32, of 16, and of 64 (two of the kernel's passes).
TEST(DeviceQuantizerElement, MxPathMatchesTheCpuBitForBit) {
  struct Shape {
    std::size_t rows, row_length, block;
  };
  for (const std::string& name : parity_format_names()) {
    const format::Format f = parity_format(name);
    for (const Shape shape : {Shape{3, 100, 32}, Shape{4, 64, 16}, Shape{2, 200, 64}}) {
      const std::size_t n = shape.rows * shape.row_length;
      const std::vector<float> in = mx_inputs(f, n, 17);
      for (const Rounding rounding : format::kAllRoundings) {
        for (const quant::MxScaleRule rule : {quant::MxScaleRule::floor, quant::MxScaleRule::round_up}) {
          quant::MxOptions o;
          o.block_size = shape.block;
          o.rule = rule;
          o.rounding = rounding;
          o.seed = 77;
          o.stream = 0x1'0000'0001ull;
          o.first_index = 6;
          const std::string where = describe_case(
              name, rounding, std::to_string(shape.row_length) + "-element rows, blocks of " + std::to_string(shape.block));
          std::vector<float> cpu(n), replayed(n);
          const std::size_t blocks = n / shape.row_length * ((shape.row_length + shape.block - 1) / shape.block);
          std::vector<std::uint8_t> cpu_codes(blocks);
          std::vector<std::uint8_t> replayed_codes;
          const quant::MxStats cpu_stats = quant::quantize_mx(f, in, cpu, shape.row_length, o, cpu_codes);
          const quant::MxStats replayed_stats = replay_mx(f, in, replayed, shape.row_length, o, replayed_codes);
          ASSERT_TRUE(bit_identical(replayed, cpu)) << where;
          ASSERT_EQ(replayed_codes, cpu_codes) << where;
          expect_same_mx_stats(replayed_stats, cpu_stats, where);
        }
      }
    }
  }
}

// ElementStats::add<false>, what the kernels' instances for ErrorSums::skip take: the counts and
// amax of add<true> against the CPU's quantizer under skip, and sums of 0 where add<true> has them.
TEST(DeviceQuantizerElement, StatsWithoutTheErrorSumsMatchTheCpuWithout) {
  for (const char* name : {"e4m3", "e2m1", "bf16", "e8m0fnu"}) {
    const format::Format f = parity_format(name);
    const std::vector<float> in = tensor_inputs(f, 0.37f, 1027, 19);
    quant::QuantizeOptions o;
    o.scale = 0.37f;
    o.error_sums = quant::ErrorSums::skip;
    std::vector<float> cpu(in.size());
    const quant::QuantStats cpu_stats = quant::quantize(f, in, cpu, o);
    const Unscale unscale = Unscale::for_scale(o.scale);
    ElementStats with, without;
    for (const float x : in) {
      const QuantizedElement q =
          quant::cuda::quantize_element<Rounding::nearest_even>(f, format::has_simple_grid(f), x, o.scale, unscale, 0);
      with.add(x, q);
      without.add<false>(x, q);
    }
    expect_same_stats(quant_stats(without, in.size()), cpu_stats, name);
    EXPECT_EQ(without.sum_sq_error, 0.0) << name;
    EXPECT_EQ(without.sum_sq_input, 0.0) << name;
    EXPECT_GT(with.sum_sq_input, 0.0) << name;
  }
}

}  // namespace
}  // namespace altgrad::quant_test
