// The memory summary counts 4 bytes per parameter for the FP32 weights and 4 bytes per parameter
// per state tensor, for each optimizer the number of state tensors docs/optimizers.md lists.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "optim/make_optimizer.hpp"
#include "optim/memory_footprint.hpp"

namespace altgrad::optim {
namespace {

struct Expected {
  OptimizerKind kind;
  float momentum;
  std::vector<std::string> state;  // as docs/optimizers.md's table lists them
};

TEST(MemoryFootprint, WeightsAndStateAreParametersTimesFourBytesPerTensor) {
  constexpr std::size_t n = 1000;  // a bit-space range of 600 and an AdamW-only range of 400
  const std::vector<ParameterRange> ranges = {{0, 600, true, false}, {600, 400, false, true}};
  const std::vector<Expected> cases = {
      {OptimizerKind::adamw, 0.9f, {"exp_avg", "exp_avg_sq"}},
      {OptimizerKind::sgd, 0.9f, {"momentum_buffer"}},
      {OptimizerKind::sgd, 0.0f, {}},
      {OptimizerKind::stiffness_adamw, 0.9f, {"exp_avg", "exp_avg_sq"}},
      {OptimizerKind::gridwalk, 0.9f, {"exp_avg", "exp_avg_sq"}},
      {OptimizerKind::madam, 0.9f, {"exp_avg", "exp_avg_sq", "weight_bound"}},
      {OptimizerKind::madam_int, 0.9f, {"exp_avg", "exp_avg_sq", "weight_bound"}},
  };
  for (const Expected& e : cases) {
    OptimizerSpec spec;
    spec.kind = e.kind;
    spec.sgd.momentum = e.momentum;
    const bool sgd = e.kind == OptimizerKind::sgd;
    const auto optimizer = make_optimizer(spec, n, sgd ? std::vector<ParameterRange>{{0, n, true}} : ranges);
    const MemoryFootprint m = memory_footprint(*optimizer);
    const std::string who = std::string(optimizer->name()) + " momentum " + std::to_string(e.momentum);
    EXPECT_EQ(m.weight_bytes, n * 4) << who;
    ASSERT_EQ(m.state.size(), e.state.size()) << who;
    for (std::size_t i = 0; i < e.state.size(); ++i) {
      EXPECT_EQ(m.state[i].name, e.state[i]) << who;
      EXPECT_EQ(m.state[i].bytes, n * 4) << who;
    }
    EXPECT_EQ(m.state_bytes(), e.state.size() * n * 4) << who;
    EXPECT_EQ(m.total_bytes(), (1 + e.state.size()) * n * 4) << who;
  }
}

TEST(MemoryFootprint, DescribesBytesAndTensorNames) {
  OptimizerSpec spec;
  const auto adamw = make_optimizer(spec, 10, {{0, 10, true}});
  EXPECT_EQ(describe(memory_footprint(*adamw), 10),
            "10 parameters: weights 40 B + state 80 B (exp_avg, exp_avg_sq) = 120 B");
  spec.kind = OptimizerKind::sgd;
  spec.sgd.momentum = 0.0f;
  EXPECT_EQ(describe(memory_footprint(*make_optimizer(spec, 10, {{0, 10, true}})), 10),
            "10 parameters: weights 40 B + state 0 B (none) = 40 B");
}

}  // namespace
}  // namespace altgrad::optim
