// TensorBoard scalars from a metrics line: one tag per number, named by its path.
#include <gtest/gtest.h>

#include <map>

#include "monitor/scalar_log.hpp"

namespace altgrad::monitor {
namespace {

TEST(ScalarLog, EveryNumberOfAMetricsLineIsTaggedByItsPath) {
  const nlohmann::json line = nlohmann::json::parse(R"({
    "step": 40, "loss": 2.5, "phase": 1,
    "grad": {"clipped": true, "l2": {"transformer.wte.weight": 0.5}},
    "quant": {"h.0.attn.q": {"amax": 3.0, "scale": null, "colwise": {"rel_error": 0.1}}},
    "diag": {"attention_entropy": {"h.0.attn": {"per_head": [1.5, 2.5]}},
             "profile": {"h.0.attn.q": {"log2": {"lo": -48, "hi": 16, "counts": [1, 2], "above": 7}}, "fit": {"format": "e1m6"}}}
  })");
  monitor::ScalarLog scalars;
  monitor::add_scalars_of(line, scalars);
  const std::map<std::string, double> tags(scalars.scalars.begin(), scalars.scalars.end());
  const std::map<std::string, double> expected = {
      {"loss", 2.5}, {"phase", 1}, {"grad/clipped", 1}, {"grad/l2/transformer.wte.weight", 0.5},
      {"quant/h.0.attn.q/amax", 3.0}, {"quant/h.0.attn.q/colwise/rel_error", 0.1},
      {"diag/attention_entropy/h.0.attn/per_head/0", 1.5}, {"diag/attention_entropy/h.0.attn/per_head/1", 2.5},
      {"diag/profile/h.0.attn.q/log2/above", 7}};
  EXPECT_EQ(tags, expected);  // no step, no null, no string, no histogram bins
  EXPECT_EQ(scalars.scalars.size(), expected.size());
}

}  // namespace
}  // namespace altgrad::monitor
