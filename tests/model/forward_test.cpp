#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "model/gpt.hpp"
#include "model_test_support.hpp"
#include "ops/determinism.hpp"
#include "ops/test_tensors.hpp"
#include "support/bit_identical.hpp"

namespace {

using namespace altgrad::model;
using namespace altgrad::model_test;
using altgrad::ops_test::all_close;
using altgrad::test_support::bit_identical;
using altgrad::ops_test::ScopedThreadCount;

// Big enough that every kernel takes its OpenMP path (B·T·C = 16384 = kMinParallelWork).
GptConfig parallel_config(Norm norm, Mlp mlp) {
  GptConfig config;
  config.n_layer = 2;
  config.n_head = 4;
  config.n_embd = 64;
  config.block_size = 64;
  config.bias = true;
  config.norm = norm;
  config.mlp = mlp;
  return config;
}

template <typename Scalar>
struct ForwardOutcome {
  Scalar loss;
  std::vector<Scalar> logits, gradients;
};

template <typename Scalar>
ForwardOutcome<Scalar> forward_backward(Gpt<Scalar>& model, const Batch& batch) {
  Activations<Scalar> acts(model.config(), batch.B, batch.T);
  model.zero_gradients();
  const Scalar loss = gpt_forward(model, acts, batch.tokens, batch.targets);
  gpt_backward(model, acts);
  return {loss, to_vector(std::span(acts.logits)), to_vector(model.gradients())};
}

// nanoGPT's sanity check: at initialization the logits are near zero, so the loss is about
// ln(vocab_size).
TEST(Forward, InitialLossIsAboutLogVocabulary) {
  Gpt<float> model(parallel_config(Norm::layernorm, Mlp::gelu));
  model.initialize(1);
  const Batch batch = make_batch(model.config(), 4, 64, 2);
  Activations<float> acts(model.config(), batch.B, batch.T);
  EXPECT_NEAR(gpt_forward(model, acts, batch.tokens, batch.targets), std::log(256.0), 0.05);
}

TEST(Forward, FloatAgreesWithDouble) {
  for (const Mlp mlp : {Mlp::gelu, Mlp::swiglu}) {
    for (const Norm norm : {Norm::layernorm, Norm::rmsnorm}) {
      Gpt<float> single(tiny_config(norm, mlp, true));
      randomize_parameters(single, 21);
      Gpt<double> twice(single.config());
      copy_parameters(single, twice);  // the same values: only the arithmetic differs
      const Batch batch = make_batch(single.config(), 2, 8, 22);
      const ForwardOutcome<float> f = forward_backward(single, batch);
      const ForwardOutcome<double> d = forward_backward(twice, batch);
      EXPECT_NEAR(f.loss, d.loss, 1e-5 * d.loss) << to_string(norm) << " " << to_string(mlp);
      EXPECT_TRUE(all_close("logits", f.logits, d.logits, {1e-5, 1e-5}));
      EXPECT_TRUE(all_close("gradients", f.gradients, d.gradients, {1e-6, 1e-3}));
    }
  }
}

TEST(Forward, TwoRunsGiveTheSameBits) {
  const ScopedThreadCount threads(altgrad::ops_test::kManyThreads);
  for (const Mlp mlp : {Mlp::gelu, Mlp::swiglu}) {
    Gpt<float> model(parallel_config(Norm::layernorm, mlp));
    model.initialize(3);
    const Batch batch = make_batch(model.config(), 4, 64, 4);
    const ForwardOutcome<float> a = forward_backward(model, batch);
    const ForwardOutcome<float> b = forward_backward(model, batch);
    EXPECT_EQ(std::memcmp(&a.loss, &b.loss, sizeof(float)), 0);
    EXPECT_TRUE(bit_identical(a.logits, b.logits)) << "logits";
    EXPECT_TRUE(bit_identical(a.gradients, b.gradients)) << "gradients";
  }
}

// The logits at position t depend on tokens 0..t only: changing the tokens after t leaves them
// unchanged, bit for bit (each row's arithmetic is the same whatever the other rows hold).
TEST(Forward, IsCausal) {
  for (const Norm norm : {Norm::layernorm, Norm::rmsnorm}) {
    Gpt<double> model(tiny_config(norm, Mlp::swiglu, true));
    randomize_parameters(model, 31);
    const std::size_t B = 2, T = 8, V = model.config().vocab_size;
    const Batch batch = make_batch(model.config(), B, T, 32);
    Activations<double> acts(model.config(), B, T);
    gpt_forward(model, acts, batch.tokens, {});
    const std::vector<double> before = to_vector(std::span(acts.logits));
    for (const std::size_t t : {0u, 3u, 6u}) {
      std::vector<std::int32_t> changed = batch.tokens;
      for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t s = t + 1; s < T; ++s) changed[b * T + s] = (changed[b * T + s] + 1 + 37 * s) % 256;
      }
      gpt_forward(model, acts, changed, {});
      for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t s = 0; s < T; ++s) {
          const std::vector<double> want(before.begin() + (b * T + s) * V, before.begin() + (b * T + s + 1) * V);
          const std::vector<double> got(acts.logits.begin() + (b * T + s) * V,
                                        acts.logits.begin() + (b * T + s + 1) * V);
          if (s <= t) {
            EXPECT_TRUE(bit_identical(got, want)) << "logits[" + std::to_string(b) + ", " + std::to_string(s) + "]";
          } else {
            EXPECT_NE(got, want) << "the change at " << s << " must show";
          }
        }
      }
    }
  }
}

TEST(Forward, WithoutTargetsComputesLogitsOnly) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 41);
  const Batch batch = make_batch(model.config(), 2, 5, 42);
  Activations<double> acts(model.config(), batch.B, batch.T);
  gpt_forward(model, acts, batch.tokens, batch.targets);
  const std::vector<double> logits = to_vector(std::span(acts.logits));
  EXPECT_TRUE(std::isnan(gpt_forward(model, acts, batch.tokens, {})));
  EXPECT_TRUE(bit_identical(to_vector(std::span(acts.logits)), logits)) << "logits";
  EXPECT_THROW(gpt_backward(model, acts), std::invalid_argument);
}

// The loss is F.cross_entropy's mean of −log softmax(logits)[target], recomputed here from the logits.
TEST(Forward, LossIsMeanCrossEntropyOfTheLogits) {
  Gpt<double> model(tiny_config(Norm::rmsnorm, Mlp::gelu, false));
  randomize_parameters(model, 43);
  const Batch batch = make_batch(model.config(), 2, 7, 44);
  Activations<double> acts(model.config(), batch.B, batch.T);
  const double loss = gpt_forward(model, acts, batch.tokens, batch.targets);
  const std::size_t N = batch.B * batch.T, V = model.config().vocab_size;
  long double sum = 0;
  for (std::size_t n = 0; n < N; ++n) {
    long double normalizer = 0;
    for (std::size_t v = 0; v < V; ++v) normalizer += std::exp(static_cast<long double>(acts.logits[n * V + v]));
    sum += std::log(normalizer) - acts.logits[n * V + static_cast<std::size_t>(batch.targets[n])];
  }
  EXPECT_NEAR(loss, static_cast<double>(sum / N), 1e-13);
}

TEST(Backward, AccumulatesIntoTheGradients) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 51);
  const Batch batch = make_batch(model.config(), 2, 6, 52);
  Activations<double> acts(model.config(), batch.B, batch.T);
  gpt_forward(model, acts, batch.tokens, batch.targets);
  gpt_backward(model, acts);
  const std::vector<double> once = to_vector(model.gradients());
  gpt_backward(model, acts);
  std::vector<double> twice_expected = once;
  for (double& g : twice_expected) g *= 2;
  EXPECT_TRUE(all_close("gradients", to_vector(model.gradients()), twice_expected, {1e-15, 1e-14}));
  model.zero_gradients();
  for (const double g : model.gradients()) ASSERT_EQ(g, 0.0);
}

TEST(Activations, RejectBadShapes) {
  const GptConfig config = tiny_config();
  EXPECT_THROW((Activations<float>(config, 0, 4)), std::invalid_argument);
  EXPECT_THROW((Activations<float>(config, 2, 0)), std::invalid_argument);
  EXPECT_THROW((Activations<float>(config, 2, 9)), std::invalid_argument);  // block_size 8
  EXPECT_NO_THROW((Activations<float>(config, 2, 8)));
}

TEST(Activations, RmsNormKeepsNoMean) {
  const Activations<float> acts(tiny_config(Norm::rmsnorm), 2, 4);
  EXPECT_TRUE(acts.layers[0].ln_1_mean.empty());
  EXPECT_EQ(acts.layers[0].ln_1_rstd.size(), 8u);
  EXPECT_TRUE(acts.hooked_weights.empty());
}

TEST(Forward, RejectsMismatchedInputs) {
  Gpt<float> model(tiny_config());
  Activations<float> acts(model.config(), 2, 4);
  const Batch batch = make_batch(model.config(), 2, 4, 61);
  EXPECT_THROW(gpt_forward(model, acts, std::span(batch.tokens).first(7), batch.targets), std::invalid_argument);
  EXPECT_THROW(gpt_forward(model, acts, batch.tokens, std::span(batch.targets).first(7)), std::invalid_argument);
  std::vector<std::int32_t> bad = batch.tokens;
  bad[3] = 256;
  EXPECT_THROW(gpt_forward(model, acts, bad, batch.targets), std::invalid_argument);
  bad[3] = -1;
  EXPECT_THROW(gpt_forward(model, acts, batch.tokens, bad), std::invalid_argument);
  Activations<float> other(tiny_config(Norm::rmsnorm), 2, 4);
  EXPECT_THROW(gpt_forward(model, other, batch.tokens, batch.targets), std::invalid_argument);
}

// The activations can move (storage and views together), e.g. into a container.
TEST(Activations, SurviveAMove) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 71);
  const Batch batch = make_batch(model.config(), 2, 5, 72);
  Activations<double> first(model.config(), batch.B, batch.T);
  const double loss = gpt_forward(model, first, batch.tokens, batch.targets);
  std::vector<Activations<double>> moved;
  moved.push_back(std::move(first));
  EXPECT_EQ(gpt_forward(model, moved[0], batch.tokens, batch.targets), loss);
  EXPECT_NO_THROW(gpt_backward(model, moved[0]));
}

}  // namespace
