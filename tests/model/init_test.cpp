#include "model/gpt.hpp"
#include "model/init.hpp"
#include "model_test_support.hpp"
#include "ops/test_tensors.hpp"
#include "support/bit_identical.hpp"

namespace {

using namespace altgrad::model;
using altgrad::model_test::to_vector;
using altgrad::test_support::bit_identical;

// Large enough for tight statistics (the smallest random tensor, wpe, has 64·64 elements), with
// n_layer 4 so the residual projections' std is 0.02/√8.
GptConfig statistics_config() {
  GptConfig config;
  config.n_layer = 4;
  config.n_head = 4;
  config.n_embd = 64;
  config.block_size = 64;
  config.bias = true;
  return config;
}

struct Moments {
  double mean, std;
};

Moments moments(std::span<const float> values) {
  double sum = 0, squares = 0;
  for (const float v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  for (const float v : values) squares += (v - mean) * (v - mean);
  return {mean, std::sqrt(squares / static_cast<double>(values.size()))};
}

TEST(Init, StdOfEveryTensorIsNanoGpts) {
  Gpt<float> model(statistics_config());
  model.initialize(1234);
  const double residual_std = 0.02 / std::sqrt(8.0);
  EXPECT_DOUBLE_EQ(init_std(ParameterRole::residual_projection, 4), residual_std);
  for (const TensorSpec& spec : model.layout().tensors()) {
    const std::span<const float> values = spec.slot.in(std::as_const(model).parameters());
    if (spec.role == ParameterRole::bias || spec.role == ParameterRole::norm_weight) {
      const float constant = spec.role == ParameterRole::bias ? 0.0f : 1.0f;
      for (const float v : values) ASSERT_EQ(v, constant) << spec.name;
      continue;
    }
    const double want = spec.role == ParameterRole::residual_projection ? residual_std : 0.02;
    const Moments m = moments(values);
    // The sample std of n normals has relative spread 1/√(2n) ≈ 1.1% for n = 4096: 5% is > 4σ.
    EXPECT_NEAR(m.std, want, 0.05 * want) << spec.name;
    EXPECT_NEAR(m.mean, 0.0, 4 * want / std::sqrt(static_cast<double>(values.size()))) << spec.name;
  }
}

TEST(Init, ReproducibleBitForBitFromASeed) {
  Gpt<float> a(statistics_config()), b(statistics_config()), c(statistics_config());
  a.initialize(7);
  b.initialize(7);
  c.initialize(8);
  EXPECT_TRUE(bit_identical(to_vector(a.parameters()), to_vector(b.parameters()))) << "parameters";
  EXPECT_NE(a.parameter("transformer.wte.weight")[0], c.parameter("transformer.wte.weight")[0]);
}

// Values are drawn in double and rounded, so a float model is the rounded double model.
TEST(Init, FloatModelIsTheDoubleModelRounded) {
  Gpt<float> single(statistics_config());
  Gpt<double> twice(statistics_config());
  single.initialize(99);
  twice.initialize(99);
  for (std::size_t i = 0; i < single.parameters().size(); ++i) {
    ASSERT_EQ(single.parameters()[i], static_cast<float>(twice.parameters()[i])) << i;
  }
}

// Keyed by (seed, parameter index): a deeper model draws the same embeddings and first block.
TEST(Init, EarlierTensorsDoNotDependOnDepth) {
  GptConfig shallow = statistics_config();
  shallow.n_layer = 1;
  Gpt<float> a(shallow), b(statistics_config());
  a.initialize(5);
  b.initialize(5);
  for (const std::string name :
       {"transformer.wte.weight", "transformer.wpe.weight", "transformer.h.0.attn.c_attn.weight"}) {
    EXPECT_TRUE(bit_identical(to_vector(a.parameter(name)), to_vector(b.parameter(name)))) << name;
  }
}

TEST(Init, PhiloxNormalHasStandardMoments) {
  constexpr std::size_t n = 200'000;
  double sum = 0, squares = 0, fourth = 0;
  std::size_t beyond_three = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double z = philox_normal(42, 3, i);
    ASSERT_TRUE(std::isfinite(z));
    sum += z;
    squares += z * z;
    fourth += z * z * z * z;
    beyond_three += std::fabs(z) > 3;
  }
  const double count = static_cast<double>(n);
  EXPECT_NEAR(sum / count, 0.0, 0.01);                                     // σ/√n ≈ 0.0022
  EXPECT_NEAR(squares / count, 1.0, 0.015);                                // √(2/n) ≈ 0.0032
  EXPECT_NEAR(fourth / count, 3.0, 0.1);                                   // √(96/n) ≈ 0.022
  EXPECT_NEAR(static_cast<double>(beyond_three) / count, 0.0027, 0.0006);  // two-sided 3σ tail
}

TEST(Init, RejectsAWrongSizedBuffer) {
  const ParameterLayout layout(statistics_config());
  std::vector<float> too_short(layout.size() - 1);
  EXPECT_THROW(initialize_parameters<float>(layout, too_short, 1), std::invalid_argument);
}

}  // namespace
