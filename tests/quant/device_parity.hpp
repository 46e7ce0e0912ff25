#pragma once
// What the GPU quantizer's parity tests feed it and how they compare it with the CPU's:
// tests/quant/cuda_element_test.cpp (its per-element code compiled on the host, any machine) and
// tests/quant/cuda_quantize_parity_test.cpp (the kernels, on a GPU).
//
// Inputs reach every edge of a format at a scale: ±0, float32 subnormals, the format's smallest
// positive value and the tie halfway to zero, min normal, max finite and the tie above it, FLT_MAX,
// ±Inf, NaNs of both signs, ties between neighbouring grid values, and values spread from far below
// the smallest subnormal to past max finite; random bit patterns besides.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "format/rounding.hpp"
#include "format/spec.hpp"
#include "quant/mx.hpp"
#include "quant/stats.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {

// Every named format (`altgrad formats`) and a few spellings that vary what the names do not:
// Inf on overflow, no subnormals, a max finite below 1, fnuz's single NaN.
inline std::vector<std::string> parity_format_names() {
  std::vector<std::string> names;
  for (const format::NamedFormat& named : format::named_formats()) names.emplace_back(named.name);
  for (const char* extra : {"e4m3,overflow=inf", "e5m2,subnormals=off", "e4m3,bias=20", "e3m4,overflow=inf"}) {
    names.emplace_back(extra);
  }
  return names;
}

inline format::Format parity_format(const std::string& name) { return format::make_format(format::parse_format(name)); }

// Per-tensor scales: one, powers of two (the reciprocal path), others (the division path), and
// scales whose products leave FP32 at both ends.
inline constexpr float kParityScales[] = {1.0f, 0.37f, 0x1p-10f, 1000.0f, 0x1p20f, 3.0e-20f, 0x1p100f, 0x1p-127f};

// Calls body(std::integral_constant<Rounding, r>{}) for a rounding known at run time.
template <typename Body>
void with_rounding(format::Rounding rounding, Body&& body) {
  using format::Rounding;
  switch (rounding) {
    case Rounding::nearest_even: return body(std::integral_constant<Rounding, Rounding::nearest_even>{});
    case Rounding::nearest_away: return body(std::integral_constant<Rounding, Rounding::nearest_away>{});
    case Rounding::toward_zero: return body(std::integral_constant<Rounding, Rounding::toward_zero>{});
    case Rounding::toward_positive: return body(std::integral_constant<Rounding, Rounding::toward_positive>{});
    case Rounding::toward_negative: return body(std::integral_constant<Rounding, Rounding::toward_negative>{});
    case Rounding::odd: return body(std::integral_constant<Rounding, Rounding::odd>{});
    case Rounding::stochastic: return body(std::integral_constant<Rounding, Rounding::stochastic>{});
    case Rounding::stochastic_equal: return body(std::integral_constant<Rounding, Rounding::stochastic_equal>{});
  }
}

// The edges listed above, each with both signs, as values that x·scale reaches (divided by the
// scale, so exact at a power-of-two scale and near the edge otherwise).
inline std::vector<float> edge_values(const format::Format& f, float scale, std::uint32_t seed) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> grid_side = {0.0f,
                                  std::numeric_limits<float>::denorm_min(),
                                  0x1.8p-140f,
                                  std::numeric_limits<float>::min(),
                                  f.min_positive(),
                                  f.min_positive() / 2,
                                  f.min_positive() * 1.5f,
                                  f.min_normal(),
                                  std::nextafter(f.min_normal(), 0.0f),
                                  f.max_finite(),
                                  std::nextafter(f.max_finite(), kInf),
                                  f.max_finite() * 2,
                                  std::numeric_limits<float>::max()};
  // The tie above max finite: half the top binade's step past it.
  const int M = f.spec.mantissa_bits;
  grid_side.push_back(f.max_finite() + std::ldexp(1.0f, std::ilogb(f.max_finite()) - M - 1));
  // Ties between random neighbouring codes (and the values themselves).
  TensorRng rng(seed);
  const std::uint32_t codes = f.code_count();
  for (int t = 0; t < 48; ++t) {
    const std::uint32_t code = rng.word() % (codes - 1);
    const float a = format::decode(f, code), b = format::decode(f, code + 1);
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    grid_side.push_back(a);
    grid_side.push_back(static_cast<float>((static_cast<double>(a) + b) / 2));
  }
  std::vector<float> x;
  for (float v : grid_side) {
    x.push_back(v / scale);
    x.push_back(-v / scale);
  }
  for (float v : {kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                  std::bit_cast<float>(0x7F80'0001u), std::bit_cast<float>(0xFFC0'1234u)}) {
    x.push_back(v);
  }
  return x;
}

// n inputs for a per-tensor call: the edges, then values spread over the format's range as the
// scale sees it, then (every fourth) random bit patterns of every exponent, NaN and Inf included.
inline std::vector<float> tensor_inputs(const format::Format& f, float scale, std::size_t n, std::uint32_t seed) {
  std::vector<float> x = edge_values(f, scale, seed);
  TensorRng rng(seed + 1);
  const int low = std::ilogb(f.min_positive()) - 6, high = std::ilogb(f.max_finite()) + 2;
  while (x.size() < n) {
    const float v = x.size() % 4 == 3 ? std::bit_cast<float>(rng.word()) : rng.log_uniform(low, high) / scale;
    x.push_back(v);
  }
  x.resize(n);
  return x;
}

// n inputs for MX blocks: regions of 32 (not aligned with the blocks when a row is not a multiple
// of 32), each with a magnitude of its own anywhere in float32's range (so exponents reach E8M0's
// clamps) and 14 binades of spread; some regions all zero, some with NaNs and Infs planted, and the
// per-tensor edges (at scale 1) scattered over the whole.
inline std::vector<float> mx_inputs(const format::Format& f, std::size_t n, std::uint32_t seed) {
  TensorRng rng(seed);
  std::vector<float> x(n);
  for (std::size_t start = 0; start < n; start += 32) {
    const std::uint32_t kind = rng.word() % 16;
    const int top = rng.integer(-135, 127);
    for (std::size_t i = start; i < std::min(n, start + 32); ++i) {
      x[i] = kind == 0 ? 0.0f : rng.log_uniform(std::max(top - 14, -149), top);
      if (kind == 1 && rng.word() % 8 == 0) x[i] = std::numeric_limits<float>::quiet_NaN();
      constexpr float kInf = std::numeric_limits<float>::infinity();
      if (kind == 2 && rng.word() % 8 == 0) x[i] = rng.word() % 2 ? kInf : -kInf;
    }
  }
  for (float v : edge_values(f, 1.0f, seed + 1)) x[rng.word() % n] = v;
  return x;
}

// The statistics that are counts or a maximum, equal; the two sums within `relative` of each other
// (both Inf, or both finite and close): their order of summation differs.
inline void expect_same_stats(const quant::QuantStats& got, const quant::QuantStats& want, const std::string& where,
                              double relative = 1e-9) {
  EXPECT_EQ(got.count, want.count) << where;
  EXPECT_EQ(got.overflow, want.overflow) << where;
  EXPECT_EQ(got.underflow, want.underflow) << where;
  EXPECT_EQ(got.nan_inputs, want.nan_inputs) << where;
  EXPECT_EQ(got.inf_inputs, want.inf_inputs) << where;
  EXPECT_EQ(got.zero_inputs, want.zero_inputs) << where;
  EXPECT_EQ(std::bit_cast<std::uint32_t>(got.amax), std::bit_cast<std::uint32_t>(want.amax)) << where;
  for (const auto& [name, a, b] : {std::tuple{"sum_sq_error", got.sum_sq_error, want.sum_sq_error},
                                   std::tuple{"sum_sq_input", got.sum_sq_input, want.sum_sq_input}}) {
    if (std::isinf(b) || std::isinf(a)) {
      EXPECT_EQ(a, b) << name << ", " << where;
    } else {
      EXPECT_NEAR(a, b, relative * std::abs(b)) << name << ", " << where;
    }
  }
}

inline void expect_same_mx_stats(const quant::MxStats& got, const quant::MxStats& want, const std::string& where) {
  expect_same_stats(got.elements, want.elements, where);
  EXPECT_EQ(got.blocks, want.blocks) << where;
  EXPECT_EQ(got.clipped_blocks, want.clipped_blocks) << where;
}

inline std::string describe_case(const std::string& format, format::Rounding rounding, const std::string& rest) {
  return format + ", " + std::string(format::rounding_name(rounding)) + ", " + rest;
}

}  // namespace altgrad::quant_test
