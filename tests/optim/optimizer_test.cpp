// The optimizer interface: the factory, the named state each optimizer keeps, restoring it by name,
// and SGD's update against its definition evaluated in double.
#include "optim/optimizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "optim/make_optimizer.hpp"

namespace {

using namespace altgrad::optim;

std::vector<std::string> state_names(const Optimizer& o) {
  std::vector<std::string> names;
  for (const auto& t : o.state()) names.push_back(t.name);
  return names;
}

TEST(Optimizer, TheFactoryBuildsTheNamedOptimizerWithItsState) {
  OptimizerSpec spec;
  const auto adamw = make_optimizer(spec, 10, {{0, 10, true}});
  EXPECT_EQ(adamw->name(), "adamw");
  EXPECT_EQ(state_names(*adamw), (std::vector<std::string>{"exp_avg", "exp_avg_sq"}));
  spec.kind = OptimizerKind::sgd;
  const auto sgd = make_optimizer(spec, 10, {{0, 10, true}});
  EXPECT_EQ(sgd->name(), "sgd");
  EXPECT_EQ(state_names(*sgd), std::vector<std::string>{"momentum_buffer"});
  spec.sgd.momentum = 0.0f;
  EXPECT_TRUE(make_optimizer(spec, 10, {{0, 10, true}})->state().empty());
  spec.sgd.nesterov = true;  // PyTorch refuses Nesterov without momentum too
  EXPECT_THROW(make_optimizer(spec, 10, {{0, 10, true}}), std::invalid_argument);
}

TEST(Optimizer, RestoringStateChecksTheNameAndTheSize) {
  Sgd sgd(4, {}, {{0, 4, true}});
  const std::vector<float> four = {1, 2, 3, 4}, three = {1, 2, 3};
  sgd.restore_state("momentum_buffer", four);
  EXPECT_EQ(sgd.state()[0].values, four);
  EXPECT_THROW(sgd.restore_state("exp_avg", four), std::invalid_argument);
  EXPECT_THROW(sgd.restore_state("momentum_buffer", three), std::invalid_argument);
  EXPECT_THROW(sgd.restore_step_count(-1), std::invalid_argument);
}

// torch.optim.SGD's definition (dampening 0) in double: d = g + wd·p; b = d first, then μ·b + d;
// p -= lr·(nesterov ? d + μ·b : b).
TEST(Sgd, MatchesItsDefinitionOverManySteps) {
  for (const bool nesterov : {false, true}) {
    const SgdConfig config{0.9f, nesterov, 0.05f};
    const std::vector<ParameterRange> ranges = {{0, 30, true}, {30, 20, false}};
    Sgd sgd(50, config, ranges);
    std::vector<float> p(50);
    std::vector<double> ref_p(50), ref_b(50);
    for (std::size_t i = 0; i < 50; ++i) ref_p[i] = p[i] = std::sin(0.7 * static_cast<double>(i));
    for (int t = 1; t <= 20; ++t) {
      std::vector<float> g(50);
      for (std::size_t i = 0; i < 50; ++i) g[i] = static_cast<float>(std::cos(0.3 * static_cast<double>(i * t)));
      const float lr = 0.05f / static_cast<float>(t);
      sgd.step(p, g, lr);
      for (std::size_t i = 0; i < 50; ++i) {
        const double d = g[i] + (i < 30 ? static_cast<double>(config.weight_decay) * ref_p[i] : 0.0);
        ref_b[i] = t == 1 ? d : static_cast<double>(config.momentum) * ref_b[i] + d;
        ref_p[i] -= static_cast<double>(lr) * (nesterov ? d + static_cast<double>(config.momentum) * ref_b[i] : ref_b[i]);
      }
    }
    for (std::size_t i = 0; i < 50; ++i) EXPECT_NEAR(p[i], ref_p[i], 1e-5) << "nesterov " << nesterov << " at " << i;
    EXPECT_EQ(sgd.step_count(), 20);
  }
}

}  // namespace
