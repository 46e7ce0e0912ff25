// The attention entropy a diagnostic step reports is that of the probabilities probs·v multiplied:
// the quantized ones when the probs point is on, with the softmax's own beside it. Both are
// recomputed here in double from the step's activations, quantizing with the format layer's
// encode/decode, and compared per head.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "recipe/recipe.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "monitor/step_diagnostics.hpp"
#include "precision/quant_hooks.hpp"
#include "support/scratch_dir.hpp"
#include "train/trainer.hpp"

namespace altgrad::train {
namespace {

constexpr std::size_t kB = 2, kT = 16;

// Per head: the mean over its B·T rows of −Σ p ln p, each p first mapped by `map`.
template <typename Map>
std::vector<double> head_entropies(std::span<const float> probs, std::size_t NH, Map map) {
  std::vector<double> heads(NH, 0.0);
  for (std::size_t b = 0; b < kB; ++b) {
    for (std::size_t h = 0; h < NH; ++h) {
      for (std::size_t t = 0; t < kT; ++t) {
        for (std::size_t s = 0; s < kT; ++s) {
          const double p = map(probs[((b * NH + h) * kT + t) * kT + s]);
          if (p > 0) heads[h] -= p * std::log(p);
        }
      }
    }
  }
  for (double& h : heads) h /= static_cast<double>(kB * kT);
  return heads;
}

struct Diagnosed {
  nlohmann::json diag;
  std::vector<std::vector<float>> softmax;  // per layer, the unquantized probabilities
  std::size_t n_head;
};

Diagnosed diagnose(const std::string& quant_toml, const test_support::ScratchDir& dir) {
  const config::TrainConfig c = config::parse_config("n_layer = 2\nn_head = 2\nn_embd = 32\nblock_size = 16\n" + quant_toml, "test.toml");
  model::Gpt<float> gpt(config::gpt_config(c));
  gpt.initialize(5);
  const recipe::Recipe recipe = recipe::resolve_recipe(c);
  precision::QuantHooks hooks(gpt.matmuls(), recipe);
  model::Activations<float> acts(gpt.config(), kB, kT, model::OperandCopies::allocated);
  std::vector<std::int32_t> x(kB * kT), y(kB * kT);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<std::int32_t>((i * 97 + 13) % 256);
    y[i] = static_cast<std::int32_t>((i * 31 + 7) % 256);
  }
  hooks.begin_step(0, true);
  model::gpt_forward(gpt, acts, x, y, &hooks);
  hooks.end_step();
  monitor::RunLog log(dir.path());
  monitor::Warnings warnings(log, [](const std::string&) {}, c.warn_every);
  monitor::ScalarLog scalars;
  monitor::KurtosisWatch kurtosis;
  Diagnosed out{monitor::step_diagnostics({gpt, acts, &hooks, {}}, 1, c, warnings, scalars, kurtosis), {},
                gpt.config().n_head};
  for (const auto& layer : acts.layers) out.softmax.emplace_back(layer.att_probs.begin(), layer.att_probs.end());
  return out;
}

void expect_heads(const nlohmann::json& layer, const std::vector<double>& expected) {
  ASSERT_EQ(layer.at("per_head").size(), expected.size());
  double mean = 0, min = expected[0];
  for (std::size_t h = 0; h < expected.size(); ++h) {
    EXPECT_NEAR(layer.at("per_head")[h].get<double>(), expected[h], 1e-9 * expected[h]) << "head " << h;
    mean += expected[h] / static_cast<double>(expected.size());
    min = std::min(min, expected[h]);
  }
  EXPECT_NEAR(layer.at("mean").get<double>(), mean, 1e-9 * mean);
  EXPECT_NEAR(layer.at("min").get<double>(), min, 1e-9 * min);
}

TEST(AttentionEntropyMetric, IsOfTheQuantizedProbabilitiesWithTheSoftmaxsBeside) {
  test_support::ScratchDir dir;
  // E2M1 (values 0, 0.5, 1, 1.5, ...) without scaling: most probabilities of 16 keys round to 0 or 0.5.
  const Diagnosed d = diagnose("[quant]\n[[quant.override]]\nmatch = \"h.*.attn.probs\"\nformat = \"e2m1\"\n", dir);
  const format::Format f = format::make_format(format::parse_format("e2m1"));
  const auto quantized = [&](float p) { return static_cast<double>(format::decode(f, format::encode(f, format::Rounding::nearest_even, p))); };
  const auto unchanged = [](float p) { return static_cast<double>(p); };
  for (std::size_t l = 0; l < d.softmax.size(); ++l) {
    const std::string name = "h." + std::to_string(l) + ".attn";
    const std::vector<double> used = head_entropies(d.softmax[l], d.n_head, quantized);
    const std::vector<double> softmax = head_entropies(d.softmax[l], d.n_head, unchanged);
    EXPECT_GT(std::fabs(used[0] - softmax[0]), 0.1) << "the format should change the entropy visibly";
    expect_heads(d.diag.at("attention_entropy").at(name), used);
    expect_heads(d.diag.at("attention_entropy_unquantized").at(name), softmax);
  }
}

TEST(AttentionEntropyMetric, IsOfTheSoftmaxWhenProbsAreNotQuantized) {
  test_support::ScratchDir dir;
  const Diagnosed d = diagnose("[quant]\npreset = \"fp8-hybrid\"\n", dir);
  for (std::size_t l = 0; l < d.softmax.size(); ++l) {
    const std::string name = "h." + std::to_string(l) + ".attn";
    expect_heads(d.diag.at("attention_entropy").at(name),
                 head_entropies(d.softmax[l], d.n_head, [](float p) { return static_cast<double>(p); }));
  }
  EXPECT_FALSE(d.diag.contains("attention_entropy_unquantized"));
}

}  // namespace
}  // namespace altgrad::train
