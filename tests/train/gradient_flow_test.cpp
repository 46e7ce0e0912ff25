// The gradient-flow record of a logged step: per-tensor norms and the layer ratio recomputed in
// double from gradients set by hand, the clipping rate by PyTorch's test, and the two warnings.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/gpt.hpp"
#include "monitor/gradient_flow.hpp"
#include "monitor/run_log.hpp"
#include "support/scratch_dir.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

TEST(GradientFlow, NormsAndTheLayerRatioAreThoseOfTheGradientAsSet) {
  test_support::ScratchDir dir;
  const config::TrainConfig config = config::parse_config("n_layer = 3\nn_head = 2\nn_embd = 8\nblock_size = 8\n", "t.toml");
  model::Gpt<float> gpt(config::gpt_config(config));
  // Gradient element i of the whole buffer: a value that differs per tensor and per element.
  auto grads = gpt.gradients();
  for (std::size_t i = 0; i < grads.size(); ++i) grads[i] = static_cast<float>(std::sin(0.37 * i)) * 1e-3f * (1 + i % 7);
  monitor::RunLog log(dir.path());
  monitor::Warnings warnings(log, nullptr, 100);
  const nlohmann::json flow = monitor::gradient_norms(gpt, 1, config, warnings);

  double top = 0, bottom = 0;
  int tensors = 0;
  for (const auto& spec : gpt.layout().tensors()) {
    if (!spec.alias_of.empty()) continue;
    const auto g = spec.slot.in(gpt.gradients());
    double squared = 0, largest = 0;
    for (const float v : g) {
      squared += static_cast<double>(v) * v;
      largest = std::max(largest, std::fabs(static_cast<double>(v)));
    }
    EXPECT_NEAR(flow.at("l2").at(spec.name).get<double>(), std::sqrt(squared), 1e-12 * std::sqrt(squared)) << spec.name;
    EXPECT_EQ(flow.at("linf").at(spec.name).get<double>(), largest) << spec.name;
    if (spec.name.starts_with("transformer.h.2.")) top += squared;
    if (spec.name.starts_with("transformer.h.0.")) bottom += squared;
    ++tensors;
  }
  EXPECT_EQ(flow.at("l2").size(), static_cast<std::size_t>(tensors));
  EXPECT_NEAR(flow.at("layer_ratio").get<double>(), std::sqrt(top / bottom), 1e-12);
  EXPECT_EQ(warnings.emitted(), 0u);

  // The bottom block's gradient a thousand times smaller: the ratio passes 100 and warns.
  for (const auto& spec : gpt.layout().tensors()) {
    if (!spec.name.starts_with("transformer.h.0.")) continue;
    for (float& v : spec.slot.in(gpt.gradients())) v *= 1e-3f;
  }
  const nlohmann::json weak = monitor::gradient_norms(gpt, 2, config, warnings);
  EXPECT_GT(weak.at("layer_ratio").get<double>(), 100.0);
  EXPECT_EQ(warnings.emitted(), 1u);
}

TEST(GradientFlow, ClippingRateCountsTheStepsTorchWouldClip) {
  test_support::ScratchDir dir;
  config::TrainConfig config;
  config.grad_clip = 1.0;
  config.warn_clip_rate = 0.5;  // the research notes' rule (off by default)
  monitor::RunLog log(dir.path());
  monitor::Warnings warnings(log, nullptr, 1);
  // A norm of exactly max_norm clips too: max_norm / (norm + 1e-6) < 1.
  const std::vector<double> norms = {0.5, 2.0, 1.0, 0.9, 3.0};
  nlohmann::json out;
  monitor::add_clipping(norms, 5, config, warnings, out);
  EXPECT_TRUE(out.at("clipped").get<bool>());
  EXPECT_DOUBLE_EQ(out.at("clip_rate").get<double>(), 3.0 / 5.0);
  EXPECT_EQ(warnings.emitted(), 0u);  // fewer than 50 steps in the window

  std::vector<double> many(60, 0.5);
  for (std::size_t i = 0; i < 31; ++i) many[i] = 5.0;
  config.warmup_iters = 100;
  monitor::add_clipping(many, 160, config, warnings, out);  // the window starts at step 101: judged
  EXPECT_FALSE(out.at("clipped").get<bool>());
  EXPECT_DOUBLE_EQ(out.at("clip_rate").get<double>(), 31.0 / 60.0);
  EXPECT_EQ(warnings.emitted(), 1u);
  monitor::add_clipping(many, 159, config, warnings, out);  // it starts at step 100, in warmup
  EXPECT_EQ(warnings.emitted(), 1u);

  config.grad_clip = 0.0;  // no clipping: nothing clips, whatever the norm
  monitor::add_clipping(many, 61, config, warnings, out);
  EXPECT_EQ(out.at("clip_rate").get<double>(), 0.0);
}

}  // namespace
}  // namespace altgrad::train
