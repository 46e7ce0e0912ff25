// The bit-space optimizers against their definitions (docs/optimizers.md): every update, step by
// step, against a re-implementation in double from the same state; grid walk's stochastic step
// unbiased; Madam's signs and bounds; each optimizer lowering a least-squares loss; stiffness_adamw
// at p = 0 bit for bit AdamW at each range's rate; the same bits with 1 and 3 threads.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "format/effective_grid.hpp"
#include "format/parse.hpp"
#include "format/philox.hpp"
#include "format/philox_key.hpp"
#include "optim/make_optimizer.hpp"
#include "optim/weight_grid.hpp"

namespace {

using namespace altgrad;
using namespace altgrad::optim;

constexpr std::uint64_t kSeed = 77;

format::Format named(const char* name) { return format::make_format(format::parse_format(name)); }

// Three ranges: an MX-blocked grid range (rows of 48: blocks of 32 and 16), an adamw_only range,
// and a grid range under one arbitrary per-tensor scale.
struct Problem {
  std::vector<ParameterRange> ranges = {{0, 96, true, false}, {96, 40, false, true}, {136, 64, true, false}};
  std::vector<WeightGrid> grids = {{named("e4m3"), GridScaling::blocks, 1.0f, 32, 48, quant::MxScaleRule::floor},
                                   default_weight_grid(),
                                   {named("e4m3"), GridScaling::fixed, 3.7f}};
  std::size_t size() const { return 200; }
};

OptimizerSpec spec_for(OptimizerKind kind) {
  OptimizerSpec spec;
  spec.kind = kind;
  spec.adamw = {0.9f, 0.99f, 1e-8f, 0.1f};
  spec.bit_space.seed = kSeed;
  spec.bit_space.stiffness_power = 2;
  spec.bit_space.adamw_lr_ratio = 0.375;  // the adamw_only range steps at 0.375·lr
  return spec;
}

std::unique_ptr<Optimizer> make(const OptimizerSpec& spec, const Problem& problem) {
  auto o = make_optimizer(spec, problem.size(), problem.ranges);
  for (std::size_t r = 0; r < problem.grids.size(); ++r) o->set_grid(r, problem.grids[r]);
  return o;
}

std::span<const float> state_of(const Optimizer& o, const std::string& name) {
  for (const auto& t : o.state()) {
    if (t.name == name) return t.values;
  }
  return {};
}

struct Expected {
  double p, m, v;
  double p_other = NAN;  // the other stochastic rounding, when the draw is too close to call in float
  // The sizes of the terms each result is summed from: float rounds the terms, so the tolerance is
  // relative to them rather than to a result that cancellation made small.
  double p_terms = 0, m_terms = 0, v_terms = 0;
};

// Adds the term sizes of p ← p + Δ, m ← m + (1 − β1)(g − m), v ← β2·v + (1 − β2)·g².
Expected with_terms(Expected e, double p, double m, double v, double g) {
  e.p_terms = std::fabs(p) + std::fabs(e.p - p);
  e.m_terms = std::fabs(m) + std::fabs(g);
  e.v_terms = std::fabs(v) + g * g;
  return e;
}

// One element's update in double, from the optimizer's float state before the step.
class Reference {
 public:
  Reference(const OptimizerSpec& spec) : spec_(spec) {}

  Expected adamw(double p, double g, double m, double v, bool decay, double lr, int t) const {
    const double p0 = p, m0 = m, v0 = v;
    const double b1 = spec_.adamw.beta1, b2 = spec_.adamw.beta2;
    if (decay) p *= 1.0 - lr * spec_.adamw.weight_decay;
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    const double u = (m / (1 - std::pow(b1, t))) / (std::sqrt(v / (1 - std::pow(b2, t))) + spec_.adamw.eps);
    return with_terms({p - lr * u, m, v}, p0, m0, v0, g);
  }

  Expected stiffness(double p, double g, double m, double v, double S, bool decay, double lr, int t) const {
    const double adamw_lr = lr * spec_.bit_space.adamw_lr_ratio;  // the decay's rate
    const double p0 = p, m0 = m, v0 = v;
    const double factor = std::pow(S, spec_.bit_space.stiffness_power);
    const bool on_grad = spec_.bit_space.precondition == Precondition::grad;
    const double b1 = spec_.adamw.beta1, b2 = spec_.adamw.beta2;
    const double grad = on_grad ? g * factor : g;
    const double decayed = decay ? p * (1.0 - adamw_lr * spec_.adamw.weight_decay) : p;
    m = b1 * m + (1 - b1) * grad;
    v = b2 * v + (1 - b2) * grad * grad;
    const double u = (m / (1 - std::pow(b1, t))) / (std::sqrt(v / (1 - std::pow(b2, t))) + spec_.adamw.eps);
    return with_terms({decayed - lr * u * (on_grad ? 1.0 : factor), m, v}, p0, m0, v0, grad);
  }

  Expected gridwalk(double p, double g, double m, double v, double S, bool decay, double lr, int t,
                    std::uint64_t index) const {
    const double m0 = m, v0 = v;
    const double b1 = spec_.adamw.beta1, b2 = spec_.adamw.beta2;
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    const double u = (m / (1 - std::pow(b1, t))) / (std::sqrt(v / (1 - std::pow(b2, t))) + spec_.adamw.eps);
    const double intended = -(decay ? lr * spec_.adamw.weight_decay * p : 0.0) - lr * u;
    const auto [k, other] = round(intended / S, word(t, index));
    return with_terms({p + k * S, m, v, p + other * S}, p, m0, v0, g);
  }

  Expected madam(double p, double g, double v, double bound, double lr, int t, bool integer, std::uint64_t index) const {
    const double v0 = v;
    const double beta = spec_.bit_space.madam_beta, g_bound = spec_.bit_space.madam_g_bound;
    v = beta * v + (1 - beta) * g * g;
    const double rms = std::sqrt(v / (1 - std::pow(beta, t)));
    const double normalized = rms > 0 ? std::clamp(g / rms, -g_bound, g_bound) : 0.0;
    const double sign = p > 0 ? 1.0 : (p < 0 ? -1.0 : 0.0);
    const double exponent = -lr * normalized * sign;
    const auto clamp = [&](double x) { return std::clamp(x, -bound, bound); };
    if (!integer) return with_terms({clamp(p * std::exp(exponent)), 0, v}, p, 0, v0, g);
    const auto [k, other] = round(exponent / std::numbers::ln2, word(t, index));
    return with_terms({clamp(std::ldexp(p, static_cast<int>(k))), 0, v, clamp(std::ldexp(p, static_cast<int>(other)))}, p,
                      0, v0, g);
  }

 private:
  // The documented draw: Philox under the grid-walk purpose key, stream = step, index = element.
  double word(int t, std::uint64_t index) const {
    const std::uint64_t key = format::philox_key(kSeed, format::RandomPurpose::grid_walk_rounding);
    return format::philox_word(key, static_cast<std::uint64_t>(t), index) / 4294967296.0;
  }
  // floor(x) + 1 with probability frac(x); the other outcome too when u is within float's reach of it.
  static std::pair<double, double> round(double x, double u) {
    const double down = std::floor(x), fraction = x - down;
    const double k = u < fraction ? down + 1 : down;
    const bool close = std::fabs(u - fraction) < 1e-5 * std::max(1.0, std::fabs(x));
    return {k, close ? (k == down ? down + 1 : down) : k};
  }

  OptimizerSpec spec_;
};

// A few float roundings of the terms a result is made of (2^-24 ≈ 6e-8 each).
bool near(double got, double want, double terms) { return std::fabs(got - want) <= 1e-6 * terms + 1e-30; }

class BitSpaceFormulaTest : public ::testing::TestWithParam<OptimizerKind> {};

TEST_P(BitSpaceFormulaTest, EveryStepMatchesTheDefinitionInDouble) {
  for (const Precondition precondition : {Precondition::grad, Precondition::update}) {
    if (precondition == Precondition::grad && GetParam() != OptimizerKind::stiffness_adamw) continue;
    OptimizerSpec spec = spec_for(GetParam());
    spec.bit_space.precondition = precondition;
    const Problem problem;
    auto optimizer = make(spec, problem);
    const Reference reference(spec);
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> p(problem.size()), g(problem.size());
    for (float& x : p) x = 0.3f * normal(rng);
    p[5] = 0.0f;  // zero stays zero under Madam
    std::vector<double> bound(problem.size());
    for (int t = 1; t <= 4; ++t) {
      for (float& x : g) x = normal(rng) * (t == 2 ? 1e-3f : 1.0f);
      const double lr = GetParam() == OptimizerKind::stiffness_adamw ? 50.0 : 0.02 * t;
      const std::vector<float> before = p;
      const auto m0 = std::vector<float>(state_of(*optimizer, "exp_avg").begin(), state_of(*optimizer, "exp_avg").end());
      const auto v0 = std::vector<float>(state_of(*optimizer, "exp_avg_sq").begin(), state_of(*optimizer, "exp_avg_sq").end());
      std::vector<float> S(problem.size());
      for (std::size_t r = 0; r < problem.ranges.size(); ++r) {
        const auto& range = problem.ranges[r];
        grid_spacing(problem.grids[r], std::span(before).subspan(range.offset, range.size),
                     std::span(S).subspan(range.offset, range.size));
        if (t == 1) {
          double sum = 0;
          for (std::size_t i = range.offset; i < range.offset + range.size; ++i) sum += double(before[i]) * before[i];
          const double b = spec.bit_space.madam_p_scale * std::sqrt(sum / range.size);
          std::fill(bound.begin() + range.offset, bound.begin() + range.offset + range.size, b);
        }
      }
      optimizer->step(p, g, static_cast<float>(lr));
      const auto m1 = state_of(*optimizer, "exp_avg");
      const auto v1 = state_of(*optimizer, "exp_avg_sq");
      std::size_t bad = 0;
      for (const auto& range : problem.ranges) {
        for (std::size_t i = range.offset; i < range.offset + range.size; ++i) {
          Expected e;
          bool check_m = true;
          if (range.adamw_only) {
            e = reference.adamw(before[i], g[i], m0[i], v0[i], range.decay, lr * spec.bit_space.adamw_lr_ratio, t);
          } else if (GetParam() == OptimizerKind::stiffness_adamw) {
            e = reference.stiffness(before[i], g[i], m0[i], v0[i], S[i], range.decay, lr, t);
          } else if (GetParam() == OptimizerKind::gridwalk) {
            e = reference.gridwalk(before[i], g[i], m0[i], v0[i], S[i], range.decay, lr, t, i);
          } else {
            e = reference.madam(before[i], g[i], v0[i], bound[i], lr, t, GetParam() == OptimizerKind::madam_int, i);
            check_m = false;
          }
          const bool p_ok = near(p[i], e.p, e.p_terms) || (!std::isnan(e.p_other) && near(p[i], e.p_other, e.p_terms));
          const bool ok = p_ok && (!check_m || near(m1[i], e.m, e.m_terms)) && near(v1[i], e.v, e.v_terms);
          if (!ok && ++bad <= 5) {
            ADD_FAILURE() << "step " << t << " element " << i << ": p " << p[i] << " want " << e.p << ", m " << m1[i]
                          << " want " << e.m << ", v " << v1[i] << " want " << e.v;
          }
        }
      }
      ASSERT_EQ(bad, 0u) << "step " << t;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, BitSpaceFormulaTest,
                         ::testing::Values(OptimizerKind::stiffness_adamw, OptimizerKind::gridwalk, OptimizerKind::madam,
                                           OptimizerKind::madam_int),
                         [](const ::testing::TestParamInfo<OptimizerKind>& p) { return std::string(kOptimizerNames[static_cast<int>(p.param)]); });

// At step 1 AdamW's direction is g/|g| up to eps, so every element wants Δw = −lr: Δk = −lr/S.
// The mean step over N independent draws has standard deviation σ = S·√(f(1 − f)/N), f = frac(Δk);
// it must lie within 5σ of Δw: a false failure once in 1.7 million runs (two-sided normal tail),
// and the draws are fixed by the seed, so a passing test stays passing.
TEST(GridWalk, TheStochasticStepIsUnbiased) {
  constexpr std::size_t N = 200'000;
  const format::Format e4m3 = named("e4m3");
  for (const float w0 : {0.3f, 1.0f, -0.0703125f}) {
    for (const double want_steps : {0.3, 2.75, -0.05, -1.5}) {
      OptimizerSpec spec = spec_for(OptimizerKind::gridwalk);
      spec.adamw.weight_decay = 0.0f;
      auto o = make_optimizer(spec, N, {{0, N, false, false}});
      o->set_grid(0, {e4m3, GridScaling::fixed, 2.0f});
      const double S = format::scaled_spacing(e4m3, w0, 2.0f);
      std::vector<float> p(N, w0), g(N, want_steps > 0 ? -1.0f : 1.0f);
      const double lr = std::fabs(want_steps) * S;
      o->step(p, g, static_cast<float>(lr));
      double sum = 0;
      for (float x : p) {
        const double k = (x - w0) / S;
        ASSERT_TRUE(k == std::floor(want_steps) || k == std::floor(want_steps) + 1) << k;
        sum += x - w0;
      }
      const double f = want_steps - std::floor(want_steps);
      const double sigma = S * std::sqrt(f * (1 - f) / N);
      EXPECT_NEAR(sum / N, want_steps * S, 5 * sigma) << "w " << w0 << ", Δk " << want_steps;
    }
  }
}

// At zero on the bf16 grid S is the subnormal step 2^-133, so Δk = Δw / S overflows FP32 for any
// sizeable update: the weight takes the intended update as it is.
TEST(GridWalk, AStepCountBeyondFloatsFractionsTakesTheIntendedUpdate) {
  OptimizerSpec spec = spec_for(OptimizerKind::gridwalk);
  auto o = make_optimizer(spec, 4, {{0, 4, false, false}});
  o->set_grid(0, default_weight_grid());
  std::vector<float> p = {0.0f, 0.0f, 1.0f, -1.0f}, g = {1.0f, -1.0f, 1.0f, 1.0f};
  o->step(p, g, 0.05f);
  // Step 1: m̂/(√v̂ + eps) = ±1/(1 + 1e-8).
  EXPECT_NEAR(p[0], -0.05, 1e-8);
  EXPECT_NEAR(p[1], 0.05, 1e-8);
  // At ±1 the bf16 step is 2^-7, so −0.05 is 6.4 steps: 6 or 7 of them.
  EXPECT_TRUE(p[2] == 1.0f - 6 * 0x1p-7f || p[2] == 1.0f - 7 * 0x1p-7f) << p[2];
  EXPECT_TRUE(p[3] == -1.0f - 6 * 0x1p-7f || p[3] == -1.0f - 7 * 0x1p-7f) << p[3];
}

TEST(Madam, SignsAreKeptAndWeightsStayWithinTheirBound) {
  for (const OptimizerKind kind : {OptimizerKind::madam, OptimizerKind::madam_int}) {
    const Problem problem;
    auto o = make(spec_for(kind), problem);
    std::mt19937 rng(9);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> p(problem.size()), g(problem.size());
    for (float& x : p) x = normal(rng);
    p[3] = 0.0f;
    const std::vector<float> initial = p;
    for (int t = 0; t < 200; ++t) {
      for (float& x : g) x = 100.0f * normal(rng);
      o->step(p, g, 0.5f);  // large steps, so the clamps are reached
      const auto bound = state_of(*o, "weight_bound");
      for (std::size_t i = 0; i < 96; ++i) {  // the first grid range
        ASSERT_EQ(std::signbit(p[i]), std::signbit(initial[i])) << i;
        ASSERT_EQ(p[i] == 0.0f, initial[i] == 0.0f) << i;
        ASSERT_LE(std::fabs(p[i]), bound[i]) << i;
      }
    }
    double sum = 0;
    for (std::size_t i = 0; i < 96; ++i) sum += double(initial[i]) * initial[i];
    EXPECT_FLOAT_EQ(state_of(*o, "weight_bound")[0], static_cast<float>(3.0 * std::sqrt(sum / 96)));
  }
}

TEST(MadamInt, WeightsMoveByWholePowersOfTwo) {
  const Problem problem;
  auto o = make(spec_for(OptimizerKind::madam_int), problem);
  std::vector<float> p(problem.size()), g(problem.size());
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = std::ldexp(i % 2 ? 1.0f : -1.0f, -3 - static_cast<int>(i % 4));
  std::size_t moved = 0;
  for (int t = 0; t < 20; ++t) {
    for (float& x : g) x = normal(rng);
    const std::vector<float> before = p;
    o->step(p, g, 0.3f);
    const auto bound = state_of(*o, "weight_bound");
    for (std::size_t i = 0; i < 96; ++i) {
      if (std::fabs(p[i]) == bound[i]) continue;  // clamped
      int e = 0;
      ASSERT_EQ(std::frexp(p[i] / before[i], &e), 0.5f) << "p " << p[i] << " from " << before[i];
      moved += p[i] != before[i];
    }
  }
  EXPECT_GT(moved, 0u);
}

// min ½‖w − w*‖² over a grid range: the gradient is w − w*.
TEST(BitSpace, EveryOptimizerLowersALeastSquaresLoss) {
  for (const OptimizerKind kind : {OptimizerKind::stiffness_adamw, OptimizerKind::gridwalk, OptimizerKind::madam,
                                   OptimizerKind::madam_int}) {
    constexpr std::size_t N = 256;
    OptimizerSpec spec = spec_for(kind);
    spec.adamw.weight_decay = 0.0f;
    spec.bit_space.stiffness_power = 1;
    auto o = make_optimizer(spec, N, {{0, N, false, false}});
    o->set_grid(0, default_weight_grid());
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> target(N), p(N), g(N);
    for (std::size_t i = 0; i < N; ++i) {
      target[i] = normal(rng);
      p[i] = target[i] * (i % 3 == 0 ? 0.25f : 2.5f);  // same signs: Madam cannot cross zero
    }
    const auto loss = [&] {
      double sum = 0;
      for (std::size_t i = 0; i < N; ++i) sum += 0.5 * (double(p[i]) - target[i]) * (double(p[i]) - target[i]);
      return sum;
    };
    const double first = loss();
    const float lr = kind == OptimizerKind::stiffness_adamw ? 4.0f : 0.02f;
    for (int t = 0; t < 300; ++t) {
      for (std::size_t i = 0; i < N; ++i) g[i] = p[i] - target[i];
      o->step(p, g, lr);
    }
    EXPECT_LT(loss(), 0.1 * first) << kOptimizerNames[static_cast<int>(kind)] << ": from " << first;
  }
}

// stiffness_power = 0 is the control for the bit-space rate split: AdamW bit for bit, the grid
// ranges at lr (decay included) and the adamw_only range at adamw_lr_ratio·lr.
TEST(StiffnessAdamW, PowerZeroIsAdamWAtEachRangesOwnRate) {
  const Problem problem;
  for (const Precondition precondition : {Precondition::grad, Precondition::update}) {
    OptimizerSpec spec = spec_for(OptimizerKind::stiffness_adamw);
    spec.bit_space.stiffness_power = 0;
    spec.bit_space.precondition = precondition;
    auto split = make(spec, problem);
    OptimizerSpec adamw_spec = spec;
    adamw_spec.kind = OptimizerKind::adamw;
    auto at_lr = make_optimizer(adamw_spec, problem.size(), problem.ranges);
    auto at_adamw_rate = make_optimizer(adamw_spec, problem.size(), problem.ranges);
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> p(problem.size()), g(problem.size());
    for (float& x : p) x = normal(rng);
    std::vector<float> p_lr = p, p_adamw_rate = p;
    for (const float lr : {0.5f, 0.25f, 0.125f}) {  // 0.375·lr exact in float
      for (float& x : g) x = normal(rng);
      split->step(p, g, lr);
      at_lr->step(p_lr, g, lr);
      at_adamw_rate->step(p_adamw_rate, g, 0.375f * lr);
    }
    for (const ParameterRange& range : problem.ranges) {
      const auto& want = range.adamw_only ? p_adamw_rate : p_lr;
      for (std::size_t i = range.offset; i < range.offset + range.size; ++i) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(p[i]), std::bit_cast<std::uint32_t>(want[i]))
            << "element " << i << (range.adamw_only ? " (adamw_only)" : " (grid)") << ", precondition "
            << static_cast<int>(precondition);
      }
    }
  }
}

TEST(BitSpace, TheSameBitsOnOneAndThreeThreads) {
  const int saved = omp_get_max_threads();
  for (const OptimizerKind kind : {OptimizerKind::stiffness_adamw, OptimizerKind::gridwalk, OptimizerKind::madam,
                                   OptimizerKind::madam_int}) {
    std::vector<std::vector<float>> results;
    for (const int threads : {1, 3}) {
      omp_set_num_threads(threads);
      constexpr std::size_t N = 3 * 48 * 400;
      auto o = make_optimizer(spec_for(kind), N, {{0, N / 3, true, false}, {N / 3, N / 3, true, true}, {2 * N / 3, N / 3, true, false}});
      o->set_grid(0, {named("e4m3"), GridScaling::blocks, 1.0f, 32, 48, quant::MxScaleRule::floor});
      o->set_grid(2, {named("e5m2"), GridScaling::fixed, 0.37f});
      std::mt19937 rng(2);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      std::vector<float> p(N), g(N);
      for (float& x : p) x = normal(rng);
      for (int t = 0; t < 3; ++t) {
        for (float& x : g) x = normal(rng);
        o->step(p, g, 0.05f);
      }
      for (const auto& s : o->state()) p.insert(p.end(), s.values.begin(), s.values.end());
      results.push_back(p);
    }
    EXPECT_TRUE(results[0] == results[1]) << kOptimizerNames[static_cast<int>(kind)];
  }
  omp_set_num_threads(saved);
}

}  // namespace
