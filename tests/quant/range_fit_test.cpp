// Range fit against brute force: every value quantized on its own by the quantizer, whose overflow
// and underflow events define overflow and flush, and a nonzero result below min normal the
// subnormal range; per-tensor scales and MX blocks, for formats of every shape.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "format/parse.hpp"
#include "quant/mx.hpp"
#include "quant/quantize.hpp"
#include "quant/range_fit.hpp"

namespace altgrad::quant {
namespace {

std::vector<float> wide_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-40, 20);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = (i % 2 ? -1.0f : 1.0f) * std::ldexp(mantissa(rng), exponent(rng));
  for (std::size_t i = 0; i < n; i += 50) x[i] = 0.0f;
  return x;
}

RangeFit brute_force(const format::Format& f, const std::vector<float>& x, float scale) {
  RangeFit fit;
  fit.count = x.size();
  for (const float v : x) {
    float out = 0;
    QuantizeOptions o;
    o.scale = scale;
    const QuantStats s = quantize(f, std::span<const float>(&v, 1), std::span<float>(&out, 1), o);
    fit.overflow += s.overflow;
    fit.flush += s.underflow;
    fit.subnormal += v != 0 && s.underflow == 0 && std::fabs(v) * scale < f.min_normal();
  }
  return fit;
}

void expect_equal(const RangeFit& got, const RangeFit& want) {
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.overflow, want.overflow);
  EXPECT_EQ(got.flush, want.flush);
  EXPECT_EQ(got.subnormal, want.subnormal);
}

const char* const kFormats[] = {"e4m3", "e5m2", "e3m4", "e2m5", "e1m6", "e7m0", "e2m1", "e5m2,subnormals=off",
                                "e4m3fnuz", "bf16"};

TEST(RangeFit, ThresholdsCountWhatTheQuantizerDoes) {
  for (const char* name : kFormats) {
    const format::Format f = format::make_format(format::parse_format(name));
    const RangeThresholds t = range_thresholds(f);
    // Random values over 60 binades, non-finite ones (counted, never in a region), and every
    // threshold with its neighbours (at scale 1 exactly on them).
    std::vector<float> x = wide_values(20000, 3);
    x.insert(x.end(), {INFINITY, -INFINITY, NAN, -NAN});
    for (const float edge : {t.overflow, t.flush, t.min_normal}) {
      for (const float v : {std::nextafter(edge, 0.0f), edge, std::nextafter(edge, INFINITY)}) {
        if (std::isfinite(v)) x.insert(x.end(), {v, -v});
      }
    }
    for (const float scale : {1.0f, 0.37f, 1024.0f, 3.0e-3f}) {
      SCOPED_TRACE(::testing::Message() << name << " scale " << scale);
      RangeFit fit;
      add_range_fit(fit, t, x, scale);
      const RangeFit want = brute_force(f, x, scale);
      expect_equal(fit, want);
      if (std::string(name) == "e4m3" && scale == 1.0f) {  // the values reach every region
        EXPECT_GT(want.overflow, 100u);
        EXPECT_GT(want.flush, 100u);
        EXPECT_GT(want.subnormal, 100u);
      }
    }
  }
}

TEST(RangeFit, BlocksCountWhatTheMxQuantizerDoes) {
  const std::vector<float> x = wide_values(96 * 40, 4);
  for (const char* name : {"e4m3", "e2m1", "e1m6"}) {
    const format::Format f = format::make_format(format::parse_format(name));
    for (const MxScaleRule rule : {MxScaleRule::floor, MxScaleRule::round_up}) {
      SCOPED_TRACE(name);
      RangeFit fit;
      add_range_fit_blocks(fit, range_thresholds(f), f, x, 96, 32, rule);
      std::vector<float> out(x.size());
      MxOptions o;
      o.rule = rule;
      const MxStats s = quantize_mx(f, x, out, 96, o);
      EXPECT_EQ(fit.count, x.size());
      EXPECT_EQ(fit.overflow, s.elements.overflow);
      EXPECT_EQ(fit.flush, s.elements.underflow);
    }
  }
}

}  // namespace
}  // namespace altgrad::quant
