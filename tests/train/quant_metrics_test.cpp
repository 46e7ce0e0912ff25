// Per-point statistics as metrics.jsonl reports them, and the warnings they raise, against counts
// made by hand on a tensor with known overflows and underflows.
#include "monitor/quant_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "support/scratch_dir.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

TEST(QuantMetrics, ReportsPercentagesOverTheIntervalAndWarnsPerPoint) {
  test_support::ScratchDir dir;
  const config::TrainConfig config =
      config::parse_config("n_layer = 1\nn_head = 1\nn_embd = 8\nblock_size = 8\n[quant.act]\nformat = \"e4m3\"\n", "t.toml");
  const model::MatmulPoints points(config::gpt_config(config));
  precision::QuantHooks hooks(points, recipe::resolve_recipe(config));
  const model::OperandPoint& act = points.operands()[0];  // h.0.attn.c_attn:act
  const model::MatmulOperand operand{act.name, "h.0.attn.c_attn", act.operand, act.index, 2, 4};
  // 8 values: 2 beyond 448 (overflow), 2 below 2^-10 (underflow), 4 exact in E4M3.
  const std::vector<float> x = {1000.0f, -600.0f, 1e-4f, -3e-4f, 1.0f, 2.0f, -0.5f, 0.25f};
  std::vector<float> out(x.size());
  monitor::RunLog log(dir.path());
  monitor::Warnings warnings(log, nullptr, 100);
  monitor::QuantMetrics metrics(hooks);
  for (std::int64_t step = 0; step < 2; ++step) {
    hooks.begin_step(step, false);
    ASSERT_TRUE(hooks.active(operand));
    hooks.apply(operand, x, out);
    hooks.end_step();
    metrics.add_step(step + 1, config, warnings);
  }
  const nlohmann::json all = metrics.take();
  const nlohmann::json stats = all.at("h.0.attn.c_attn:act");
  monitor::ScalarLog scalars;
  monitor::add_scalars_of({{"step", 2}, {"quant", all}}, scalars);
  EXPECT_DOUBLE_EQ(stats.at("overflow_pct").get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(stats.at("underflow_pct").get<double>(), 25.0);
  EXPECT_EQ(stats.at("non_finite").get<int>(), 0);
  EXPECT_EQ(stats.at("amax").get<double>(), 1000.0);
  EXPECT_EQ(stats.at("scale").get<double>(), 1.0);
  // ‖x − x̂‖² = (1000 − 448)² + (600 − 448)² + (1e-4)² + (3e-4)², over ‖x‖².
  double error = 552.0 * 552.0 + 152.0 * 152.0 + 1e-8 + 9e-8, norm = 0;
  for (const float v : x) norm += static_cast<double>(v) * v;
  EXPECT_NEAR(stats.at("rel_error").get<double>(), std::sqrt(error / norm), 1e-9);
  EXPECT_EQ(stats.at("zero_in_pct").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(stats.at("zero_out_pct").get<double>(), 25.0);  // the two underflows
  EXPECT_EQ(scalars.scalars.size(), 8u);  // quant/h.0.attn.c_attn:act/<each of the eight>
  // One overflow and one underflow warning: the second step's repeat is within warn_every.
  EXPECT_EQ(warnings.emitted(), 2u);
  EXPECT_EQ(warnings.suppressed(), 2u);
  EXPECT_TRUE(metrics.take().empty());  // a new interval begins
}

// Under block scaling the column-wise copy (blocks down the columns, for dW-like GEMMs) has its own
// statistics under "colwise". x = [[1000, 1e-6], [1, 1e-6]] in E4M3, blocks of 32, floor rule:
// row-wise blocks {1000, 1e-6} (scale 2^-1: 1000 overflows, 1e-6 underflows) and {1, 1e-6}
// (scale 2^8: 1e-6 underflows): 25% overflow, 50% underflow. Column-wise blocks {1000, 1}
// (1000 overflows) and {1e-6, 1e-6} (exactly scaled): 25% overflow, 0% underflow.
TEST(QuantMetrics, ReportsColumnWiseCopiesApartUnderBlockScaling) {
  test_support::ScratchDir dir;
  const config::TrainConfig config = config::parse_config(
      "n_layer = 1\nn_head = 1\nn_embd = 8\nblock_size = 8\n[quant.act]\nformat = \"e4m3\"\nscaling = \"block\"\n",
      "t.toml");
  const model::MatmulPoints points(config::gpt_config(config));
  precision::QuantHooks hooks(points, recipe::resolve_recipe(config));
  const model::OperandPoint& act = points.operands()[0];  // h.0.attn.c_attn:act
  model::MatmulOperand operand{act.name, "h.0.attn.c_attn", act.operand, act.index, 2, 2};
  const std::vector<float> x = {1000.0f, 1e-6f, 1.0f, 1e-6f};
  std::vector<float> out(x.size());
  monitor::RunLog log(dir.path());
  monitor::Warnings warnings(log, nullptr, 100);
  monitor::QuantMetrics metrics(hooks);
  hooks.begin_step(0, false);
  hooks.apply(operand, x, out);
  operand.reduction = model::Reduction::along_rows;
  ASSERT_TRUE(hooks.axis_dependent(operand));
  hooks.apply(operand, x, out);
  hooks.end_step();
  metrics.add_step(1, config, warnings);
  const nlohmann::json all = metrics.take();
  const nlohmann::json stats = all.at("h.0.attn.c_attn:act");
  monitor::ScalarLog scalars;
  monitor::add_scalars_of({{"step", 2}, {"quant", all}}, scalars);
  EXPECT_DOUBLE_EQ(stats.at("overflow_pct").get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(stats.at("underflow_pct").get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(stats.at("colwise").at("overflow_pct").get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(stats.at("colwise").at("underflow_pct").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(stats.at("colwise").at("clipped_blocks_pct").get<double>(), 50.0);
  bool tagged = false;
  for (const auto& [tag, value] : scalars.scalars) tagged |= tag == "quant/h.0.attn.c_attn:act/colwise/underflow_pct";
  EXPECT_TRUE(tagged);
  EXPECT_EQ(warnings.emitted(), 3u);  // row-wise overflow and underflow, column-wise overflow
}

}  // namespace
}  // namespace altgrad::train

namespace altgrad::train {
namespace {

// A point whose amax doubles every 10 steps warns once the 100-step window is full; one whose amax
// only wanders does not.
TEST(QuantMetrics, AmaxGrowingExponentiallyWarns) {
  for (const bool growing : {true, false}) {
    test_support::ScratchDir dir;
    const config::TrainConfig config =
        config::parse_config("n_layer = 1\nn_head = 1\nn_embd = 8\nblock_size = 8\n[quant.act]\nformat = \"e5m2\"\n", "t.toml");
    const model::MatmulPoints points(config::gpt_config(config));
    precision::QuantHooks hooks(points, recipe::resolve_recipe(config));
    const model::OperandPoint& act = points.operands()[0];
    const model::MatmulOperand operand{act.name, "h.0.attn.c_attn", act.operand, act.index, 2, 4};
    {
      monitor::RunLog log(dir.path());
      monitor::Warnings warnings(log, nullptr, 1000);
      monitor::QuantMetrics metrics(hooks);
      for (std::int64_t step = 0; step < 120; ++step) {
        const float level = growing ? std::ldexp(1e-3f, static_cast<int>(step / 10)) : 1.0f + 0.5f * (step % 3);
        const std::vector<float> x = {level, -0.5f * level, 0.25f * level, 0.1f * level,
                                      0.3f * level, -0.2f * level, 0.7f * level, 0.05f * level};
        std::vector<float> out(x.size());
        hooks.begin_step(step, false);
        hooks.apply(operand, x, out);
        hooks.end_step();
        metrics.add_step(step + 1, config, warnings);
      }
    }
    int growth = 0;
    for (const auto& e : json_lines(dir.path() / "events.jsonl")) growth += e.at("kind") == "amax_growth";
    EXPECT_EQ(growth, growing ? 1 : 0) << (growing ? "growing" : "wandering");
  }
}

}  // namespace
}  // namespace altgrad::train
