// The whole model's backward pass against finite differences of its forward pass, in double, on
// tiny configs covering layernorm/rmsnorm × gelu/swiglu × bias on/off.
//
// Differences use the fourth-order central stencil
//   f'(x) ≈ (f(x − 2h) − 8 f(x − h) + 8 f(x + h) − f(x + 2h)) / 12h,   h = 2.5e-4.
// Its truncation error falls as h⁴ (measured: 1.8e-6, 1.1e-7, 7e-9, 4e-10 for the worst wte
// element at h = 2e-3, 1e-3, 5e-4, 2.5e-4: the analytic gradient is the limit), and its rounding
// error is about 1e-16 · |loss| / h ≈ 1e-11. Both lie far below the tolerance, so the check can be
// tight: |analytic − numeric| ≤ 1e-10 + 1e-6 · |numeric|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "model/gpt.hpp"
#include "model_test_support.hpp"
#include "ops/test_tensors.hpp"

namespace {

using namespace altgrad::model;
using namespace altgrad::model_test;
using altgrad::ops_test::all_close;
using altgrad::ops_test::Tolerance;

constexpr double kStep = 2.5e-4;
constexpr Tolerance kTolerance{1e-10, 1e-6};
constexpr std::size_t kSamplesPerTensor = 8;

// d loss / d parameters[at], from the forward pass alone; the parameter is restored exactly.
double numerical_derivative(Gpt<double>& model, Activations<double>& acts, const Batch& batch, std::size_t at) {
  double& x = model.parameters()[at];
  const double saved = x;
  const auto loss_at = [&](double offset) {
    x = saved + offset;
    return static_cast<double>(gpt_forward(model, acts, batch.tokens, batch.targets));
  };
  const double derivative =
      (loss_at(-2 * kStep) - 8 * loss_at(-kStep) + 8 * loss_at(kStep) - loss_at(2 * kStep)) / (12 * kStep);
  x = saved;
  return derivative;
}

// Elements of a tensor to check: a few at random, and for the tied wte, elements in the rows of
// input tokens (which get both the embedding's and the LM head's gradient).
std::vector<std::size_t> sample_elements(const TensorSpec& spec, std::size_t tensor_index, const Batch& batch,
                                         std::size_t C) {
  std::set<std::size_t> elements;
  if (spec.slot.size <= kSamplesPerTensor) {
    for (std::size_t i = 0; i < spec.slot.size; ++i) elements.insert(i);
  } else {
    std::mt19937_64 generator(tensor_index);
    std::uniform_int_distribution<std::size_t> uniform(0, spec.slot.size - 1);
    while (elements.size() < kSamplesPerTensor) elements.insert(uniform(generator));
  }
  if (spec.name == "transformer.wte.weight") {
    for (std::size_t i = 0; i < 3; ++i) {
      const auto row = static_cast<std::size_t>(batch.tokens[i]);
      for (std::size_t c = 0; c < C; c += 3) elements.insert(row * C + c);
    }
  }
  return {elements.begin(), elements.end()};
}

struct GradientCase {
  Norm norm;
  Mlp mlp;
  bool bias;
  std::size_t T;
};

std::string case_name(const ::testing::TestParamInfo<GradientCase>& info) {
  const GradientCase& c = info.param;
  return std::string(to_string(c.norm)) + "_" + std::string(to_string(c.mlp)) + (c.bias ? "_bias" : "_nobias") + "_T" +
         std::to_string(c.T);
}

class GradientCheck : public ::testing::TestWithParam<GradientCase> {};

TEST_P(GradientCheck, EveryParameterMatchesFiniteDifferences) {
  const GradientCase& c = GetParam();
  Gpt<double> model(tiny_config(c.norm, c.mlp, c.bias));
  randomize_parameters(model, 11);
  const Batch batch = make_batch(model.config(), 2, c.T, 3);
  Activations<double> acts(model.config(), batch.B, batch.T);
  gpt_forward(model, acts, batch.tokens, batch.targets);
  gpt_backward(model, acts);

  const auto tensors = model.layout().tensors();
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    std::vector<double> analytic, numeric;
    for (const std::size_t i : sample_elements(tensors[k], k, batch, model.config().n_embd)) {
      const std::size_t at = tensors[k].slot.offset + i;
      analytic.push_back(model.gradients()[at]);
      numeric.push_back(numerical_derivative(model, acts, batch, at));
    }
    EXPECT_TRUE(all_close(tensors[k].name, analytic, numeric, kTolerance));
  }
}

INSTANTIATE_TEST_SUITE_P(Model, GradientCheck,
                         ::testing::Values(GradientCase{Norm::layernorm, Mlp::gelu, true, 5},
                                           GradientCase{Norm::layernorm, Mlp::gelu, false, 6},
                                           GradientCase{Norm::layernorm, Mlp::swiglu, true, 7},
                                           GradientCase{Norm::layernorm, Mlp::swiglu, false, 8},
                                           GradientCase{Norm::rmsnorm, Mlp::gelu, true, 8},
                                           GradientCase{Norm::rmsnorm, Mlp::gelu, false, 7},
                                           GradientCase{Norm::rmsnorm, Mlp::swiglu, true, 6},
                                           GradientCase{Norm::rmsnorm, Mlp::swiglu, false, 5}),
                         case_name);

// The check is sharp: a gradient off by 1e-5 relative fails it.
TEST(GradientCheckTool, DetectsASmallError) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 12);
  const Batch batch = make_batch(model.config(), 2, 6, 4);
  Activations<double> acts(model.config(), batch.B, batch.T);
  gpt_forward(model, acts, batch.tokens, batch.targets);
  gpt_backward(model, acts);
  const std::size_t at = model.layout().at("transformer.h.0.attn.c_attn.weight").slot.offset + 5;
  const double numeric = numerical_derivative(model, acts, batch, at);
  ASSERT_GT(std::fabs(numeric), 1e-4);
  EXPECT_TRUE(all_close("exact", std::vector<double>{model.gradients()[at]}, std::vector<double>{numeric}, kTolerance));
  EXPECT_FALSE(all_close("perturbed", std::vector<double>{model.gradients()[at] * (1 + 1e-5)},
                         std::vector<double>{numeric}, kTolerance));
}

// wte's gradient = the LM head's doutᵀ·ln_f(x) + the embedding's scatter of d x into the rows of
// input tokens. Rows of tokens never input get the first only; input rows get a second, sizeable
// part (which the finite-difference check above confirms is right).
TEST(TiedWeight, GradientHasBothContributions) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 13);
  const Batch batch = make_batch(model.config(), 2, 8, 5);
  Activations<double> acts(model.config(), batch.B, batch.T);
  gpt_forward(model, acts, batch.tokens, batch.targets);
  gpt_backward(model, acts);

  const std::size_t N = batch.B * batch.T, C = model.config().n_embd, V = model.config().vocab_size;
  std::vector<double> head_part(V * C, 0.0);  // Σ_n dlogits[n, v] · ln_f[n, c]
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t v = 0; v < V; ++v) {
      for (std::size_t c = 0; c < C; ++c) head_part[v * C + c] += acts.grad.logits[n * V + v] * acts.ln_f[n * C + c];
    }
  }
  const std::set<std::int32_t> inputs(batch.tokens.begin(), batch.tokens.end());
  const std::span<const double> wte_grad = std::as_const(model).gradient("transformer.wte.weight");
  double largest_embedding_part = 0;
  for (std::size_t v = 0; v < V; ++v) {
    for (std::size_t c = 0; c < C; ++c) {
      const double embedding_part = wte_grad[v * C + c] - head_part[v * C + c];
      if (inputs.count(static_cast<std::int32_t>(v)) == 0) {
        ASSERT_NEAR(embedding_part, 0.0, 1e-15) << "row " << v << " is no input token";
      } else {
        largest_embedding_part = std::max(largest_embedding_part, std::fabs(embedding_part));
      }
    }
  }
  EXPECT_GT(largest_embedding_part, 1e-3);
  // lm_head.weight names the same storage, so it shows the same gradient.
  EXPECT_EQ(std::as_const(model).gradient("lm_head.weight").data(), wte_grad.data());
}

}  // namespace
