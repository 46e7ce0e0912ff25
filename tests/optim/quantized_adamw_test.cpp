// AdamW with its moments kept as codes (optim/adamw.hpp, MomentStorage): each step against the
// published update evaluated in double from the moments the optimizer held before it, the new
// moments against the brute-force nearest code, and the same bits on any thread count and across a
// restore from the stored codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "optim/adamw.hpp"
#include "optim/memory_footprint.hpp"
#include "optim/nearest_code_reference.hpp"
#include "support/thread_count.hpp"

namespace altgrad::optim {
namespace {

const AdamWConfig kMomentConfig{0.9f, 0.95f, 1e-8f, 0.1f};
const std::vector<ParameterRange> kMomentRanges = {{0, 100, true}, {100, 45, false}, {145, 64, true}};
constexpr std::size_t kMomentCount = 209;

MomentStorage storage(const std::string& m, const std::string& v, format::Rounding r = format::Rounding::nearest_even) {
  return {m, v, 32, r, 7};
}

// A moment's values as the optimizer holds them now: FP32 state, or codes decoded.
std::vector<double> held_moment(const AdamW& adam, const std::string& name) {
  for (const StateTensor& t : adam.state()) {
    if (t.name == name) return {t.values.begin(), t.values.end()};
  }
  for (const QuantizedState& q : adam.quantized_state()) {
    if (q.name() != name) continue;
    std::vector<double> out(q.size());
    std::vector<float> group(q.groups().group_size());
    for (std::size_t g = 0; g < q.groups().count(); ++g) {
      q.decode_group(g, group.data());
      for (std::size_t i = q.groups().begin(g); i < q.groups().end(g); ++i) out[i] = group[i - q.groups().begin(g)];
    }
    return out;
  }
  ADD_FAILURE() << "no state tensor " << name;
  return {};
}

const QuantizedState* codes_of(const AdamW& adam, const std::string& name) {
  for (const QuantizedState& q : adam.quantized_state()) {
    if (q.name() == name) return &q;
  }
  return nullptr;
}

// The published step in double (torchao's single_param_adam, FP8-LM's LBAdamW): from the moments
// held before the step, p ← p(1 − lr·wd); m' = β1 m + (1 − β1) g; v' = β2 v + (1 − β2) g²;
// p ← p − lr/(1 − β1^t) · m' / (√v' / √(1 − β2^t) + ε). The update reads m', v' unrounded.
struct MomentReference {
  std::vector<double> p, m, v;
};

MomentReference reference_step(std::vector<double> p, std::vector<double> m, std::vector<double> v,
                               const std::vector<float>& g, double lr, int t) {
  const double b1 = kMomentConfig.beta1, b2 = kMomentConfig.beta2;
  for (const ParameterRange& r : kMomentRanges) {
    for (std::size_t i = r.offset; i < r.offset + r.size; ++i) {
      if (r.decay) p[i] *= 1.0 - lr * static_cast<double>(kMomentConfig.weight_decay);
      m[i] = b1 * m[i] + (1.0 - b1) * g[i];
      v[i] = b2 * v[i] + (1.0 - b2) * static_cast<double>(g[i]) * g[i];
      const double denom = std::sqrt(v[i]) / std::sqrt(1.0 - std::pow(b2, t)) + kMomentConfig.eps;
      p[i] -= lr / (1.0 - std::pow(b1, t)) * m[i] / denom;
    }
  }
  return {p, m, v};
}

std::vector<float> moment_gradients(std::mt19937& gen) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> g(kMomentCount);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = normal(gen) * (i < 100 ? 0.01f : 1.0f);
  return g;
}

// The new codes: per group d = max(amax, 1e-12)/max finite of the reference's m', and each code
// the nearest of m'/d among all the format's values (nearest_code_reference.hpp), unless m'/d lies within 1e-5 (relative) of a midpoint, where
// FP32 and double may round apart.
void expect_nearest_moment(const QuantizedState& q, const std::vector<double>& exact) {
  const format::Format& f = q.format();
  const optim_test::GridTable grid(f);
  for (std::size_t g = 0; g < q.groups().count(); ++g) {
    double amax = 0.0;
    for (std::size_t i = q.groups().begin(g); i < q.groups().end(g); ++i) amax = std::max(amax, std::fabs(exact[i]));
    const double d_ref = std::max(amax, 1e-12) / f.max_finite();
    const double d = q.scales()[g];
    if (d_ref >= std::numeric_limits<float>::min()) {
      ASSERT_NEAR(d, d_ref, 1e-5 * d_ref) << q.name() << " group " << g;
    }
    for (std::size_t i = q.groups().begin(g); i < q.groups().end(g); ++i) {
      const double y = std::clamp(exact[i] / d, -static_cast<double>(f.max_finite()), static_cast<double>(f.max_finite()));
      const double want = grid.nearest(y).value;
      const double got = format::decode(f, q.code(i));
      if (got == want) continue;
      const double midpoint = 0.5 * (got + want);
      ASSERT_NEAR(y, midpoint, 1e-5 * std::fabs(y)) << q.name() << " element " << i << ": got " << got << ", nearest " << want;
    }
  }
}

void expect_steps_follow_the_formula(const MomentStorage& s) {
  SCOPED_TRACE(s.m_format + " / " + s.v_format);
  std::mt19937 gen(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> params(kMomentCount);
  for (auto& x : params) x = normal(gen);
  AdamW adam(kMomentCount, kMomentConfig, kMomentRanges, s);
  for (int t = 1; t <= 12; ++t) {
    const std::vector<float> g = moment_gradients(gen);
    const double lr = 1e-2 * t / 12.0;
    const MomentReference ref = reference_step({params.begin(), params.end()}, held_moment(adam, "exp_avg"),
                                               held_moment(adam, "exp_avg_sq"), g, static_cast<float>(lr), t);
    adam.step(params, g, static_cast<float>(lr));
    for (std::size_t i = 0; i < kMomentCount; ++i) {
      ASSERT_NEAR(params[i], ref.p[i], 1e-6 * std::max(1.0, std::fabs(ref.p[i]))) << "step " << t << " parameter " << i;
    }
    if (const QuantizedState* m = codes_of(adam, "exp_avg")) expect_nearest_moment(*m, ref.m);
    if (const QuantizedState* v = codes_of(adam, "exp_avg_sq")) expect_nearest_moment(*v, ref.v);
  }
}

TEST(QuantizedAdamW, EachStepIsThePublishedUpdateWithTheNewMomentsRoundedAfterIt) {
  expect_steps_follow_the_formula(storage("e4m3", "e5m2"));  // COAT-like m, FP8-LM-like v range
  expect_steps_follow_the_formula(storage("e4m3", "e4m3"));  // torchao's AdamWFp8
  expect_steps_follow_the_formula(storage("e4m3", "bf16"));
  expect_steps_follow_the_formula(storage("e4m3", "fp16"));  // FP8-LM's E4M3 m, FP16 v
  expect_steps_follow_the_formula(storage("fp32", "e4m3"));
  expect_steps_follow_the_formula(storage("e2m1", "fp32"));
  expect_steps_follow_the_formula(storage("e5m2", "e8m0fnu"));
}

TEST(QuantizedAdamW, Fp32StorageIsTheFp32OptimizerWhateverTheGroupAndRounding) {
  std::vector<float> a(kMomentCount, 0.5f), b = a;
  AdamW plain(kMomentCount, kMomentConfig, kMomentRanges);
  AdamW keyed(kMomentCount, kMomentConfig, kMomentRanges, {"fp32", "fp32", 7, format::Rounding::stochastic, 3});
  EXPECT_TRUE(keyed.quantized_state().empty());
  ASSERT_EQ(keyed.state().size(), 2u);
  std::mt19937 gen(9);
  for (int t = 0; t < 5; ++t) {
    const std::vector<float> g = moment_gradients(gen);
    plain.step(a, g, 1e-2f);
    keyed.step(b, g, 1e-2f);
  }
  EXPECT_EQ(a, b);
  EXPECT_EQ(plain.state()[1].values, keyed.state()[1].values);
}

struct MomentRun {
  std::vector<float> params;
  std::vector<std::vector<std::uint8_t>> codes;
  std::vector<std::vector<float>> scales;
  bool operator==(const MomentRun&) const = default;
};

MomentRun snapshot(const AdamW& adam, const std::vector<float>& params) {
  MomentRun run{params, {}, {}};
  for (const QuantizedState& q : adam.quantized_state()) {
    run.codes.emplace_back(q.code_data().begin(), q.code_data().end());
    run.scales.emplace_back(q.scales().begin(), q.scales().end());
  }
  return run;
}

MomentRun stochastic_run(int steps) {
  std::mt19937 gen(21);
  std::vector<float> params(kMomentCount, 0.25f);
  AdamW adam(kMomentCount, kMomentConfig, kMomentRanges, storage("e4m3", "e5m2", format::Rounding::stochastic));
  for (int t = 0; t < steps; ++t) adam.step(params, moment_gradients(gen), 1e-2f);
  return snapshot(adam, params);
}

TEST(QuantizedAdamW, StochasticWritesGiveTheSameBitsOnAnyThreadCount) {
  const MomentRun one = test_support::with_threads(1, [] { return stochastic_run(6); });
  const MomentRun three = test_support::with_threads(3, [] { return stochastic_run(6); });
  EXPECT_TRUE(one == three);
  // And the draws matter: nearest-even writes give other codes.
  std::mt19937 gen(21);
  std::vector<float> params(kMomentCount, 0.25f);
  AdamW nearest(kMomentCount, kMomentConfig, kMomentRanges, storage("e4m3", "e5m2"));
  for (int t = 0; t < 6; ++t) nearest.step(params, moment_gradients(gen), 1e-2f);
  EXPECT_NE(snapshot(nearest, params).codes, one.codes);
}

TEST(QuantizedAdamW, RestoringTheCodesContinuesBitForBit) {
  const MomentStorage s = storage("e4m3", "e5m2", format::Rounding::stochastic);
  std::mt19937 gen(21);
  std::vector<float> params(kMomentCount, 0.25f);
  AdamW first(kMomentCount, kMomentConfig, kMomentRanges, s);
  for (int t = 0; t < 3; ++t) first.step(params, moment_gradients(gen), 1e-2f);
  AdamW second(kMomentCount, kMomentConfig, kMomentRanges, s);
  for (const QuantizedState& q : first.quantized_state()) second.restore_quantized_state(q.name(), q.code_data(), q.scales());
  second.restore_step_count(first.step_count());
  std::vector<float> resumed = params;
  for (int t = 0; t < 3; ++t) {
    const std::vector<float> g = moment_gradients(gen);
    first.step(params, g, 1e-2f);
    second.step(resumed, g, 1e-2f);
  }
  EXPECT_TRUE(snapshot(first, params) == snapshot(second, resumed));
  EXPECT_THROW(second.restore_quantized_state("momentum_buffer", {}, {}), std::invalid_argument);
}

TEST(QuantizedAdamW, RefusesFormatsAndGroupsItCannotUse) {
  EXPECT_THROW(AdamW(10, kMomentConfig, {{0, 10, true}}, storage("e8m0fnu", "fp32")), std::invalid_argument);
  EXPECT_THROW(AdamW(10, kMomentConfig, {{0, 10, true}}, storage("e4m4x", "fp32")), std::invalid_argument);
  EXPECT_THROW(AdamW(10, kMomentConfig, {{0, 10, true}}, {"e4m3", "fp32", 0, format::Rounding::nearest_even, 0}),
               std::invalid_argument);
  EXPECT_THROW(AdamW(10, kMomentConfig, {{0, 10, true}}, {"e4m3", "fp32", kMaxStateGroup + 1, format::Rounding::nearest_even, 0}),
               std::invalid_argument);
  EXPECT_NO_THROW(AdamW(10, kMomentConfig, {{0, 10, true}}, storage("fp32", "e8m0fnu")));
}

TEST(QuantizedAdamW, TheMemoryFootprintCountsCodesAndScales) {
  AdamW adam(1000, kMomentConfig, {{0, 1000, true}}, {"e4m3", "bf16", 128, format::Rounding::nearest_even, 0});
  const MemoryFootprint m = memory_footprint(adam);
  ASSERT_EQ(m.state.size(), 2u);
  EXPECT_EQ(m.state[0].name, "exp_avg");
  EXPECT_EQ(m.state[0].bytes, 1000u + 8u * 4u);  // 8 groups of up to 128
  EXPECT_EQ(m.state[1].name, "exp_avg_sq");
  EXPECT_EQ(m.state[1].bytes, 2000u + 8u * 4u);
  EXPECT_EQ(m.weight_bytes, 4000u);
}

}  // namespace
}  // namespace altgrad::optim
