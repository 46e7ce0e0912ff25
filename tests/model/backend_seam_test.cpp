// The model reaches its buffers only through the backend seam (ops/backend.hpp): on a backend whose
// memory faults at any other host access (guarded_backend.hpp), the passes run and give the CPU
// backend's bits. Passes with hooks on such a backend are the trainer's (tests/train/
// device_training_test.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "guarded_backend.hpp"
#include "model/gpt.hpp"
#include "model/sample.hpp"
#include "model_test_support.hpp"

namespace {

using namespace altgrad;
using namespace altgrad::model;
using namespace altgrad::model_test;

template <typename Scalar>
std::vector<Scalar> on_host(ops::Memory& memory, std::span<const Scalar> values) {
  std::vector<Scalar> host(values.size());
  ops::download(memory, std::span<Scalar>(host), values);
  return host;
}

template <typename Scalar>
bool same_bits(const std::vector<Scalar>& a, const std::vector<Scalar>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Scalar)) == 0;
}

struct SeamVariant {
  Norm norm;
  Mlp mlp;
  bool bias;
};

class BackendSeam : public ::testing::TestWithParam<SeamVariant> {};

TEST_P(BackendSeam, GuardedMemoryGivesTheCpuBackendsBits) {
  const SeamVariant v = GetParam();
  GptConfig config = tiny_config(v.norm, v.mlp, v.bias);
  const std::size_t B = 2, T = config.block_size;
  const std::vector<std::int32_t> tokens = tokens_for(config, B * T, 1), targets = tokens_for(config, B * T, 2);

  Gpt<float> reference(config);
  reference.initialize(7);
  Activations<float> reference_acts(config, B, T);
  const float reference_loss = gpt_forward(reference, reference_acts, tokens, targets);
  gpt_backward(reference, reference_acts);

  GuardedBackend<float> guarded;
  Gpt<float> model(config, guarded.backend());
  model.initialize(7);
  Activations<float> acts(config, B, T, OperandCopies::none, guarded.memory);
  const float loss = gpt_forward(model, acts, tokens, targets);
  gpt_backward(model, acts);

  EXPECT_EQ(std::memcmp(&loss, &reference_loss, sizeof loss), 0) << loss << " vs " << reference_loss;
  EXPECT_TRUE(same_bits(on_host(guarded.memory, std::as_const(model).parameters()), to_vector(reference.parameters())));
  EXPECT_TRUE(same_bits(on_host(guarded.memory, std::as_const(model).gradients()), to_vector(reference.gradients())));

  // A copy of the model is a new allocation in the same memory, with the same values.
  const Gpt<float> copy = model;
  EXPECT_TRUE(same_bits(on_host(guarded.memory, copy.gradients()), to_vector(reference.gradients())));
  model.zero_gradients();
  EXPECT_TRUE(same_bits(on_host(guarded.memory, std::as_const(model).gradients()),
                        std::vector<float>(model.layout().size(), 0.0f)));
}

INSTANTIATE_TEST_SUITE_P(Variants, BackendSeam,
                         ::testing::Values(SeamVariant{Norm::layernorm, Mlp::gelu, false},
                                           SeamVariant{Norm::rmsnorm, Mlp::swiglu, true}));

TEST(BackendSeamSampling, GuardedMemorySamplesTheCpuBackendsText) {
  const GptConfig config = tiny_config();
  Gpt<float> reference(config);
  reference.initialize(3);
  GuardedBackend<float> guarded;
  Gpt<float> model(config, guarded.backend());
  model.initialize(3);
  const SampleOptions options{.tokens = 12, .temperature = 1.0, .top_k = 0, .seed = 5};
  EXPECT_EQ(sample(model, "ab", options), sample(reference, "ab", options));
}

TEST(BackendSeamErrors, ActivationsInAnotherMemoryAreRefused) {
  const GptConfig config = tiny_config();
  GuardedBackend<float> guarded;
  Gpt<float> model(config, guarded.backend());
  Activations<float> host_acts(config, 1, 4);
  const std::vector<std::int32_t> tokens(4, 1);
  EXPECT_THROW(gpt_forward(model, host_acts, tokens, tokens), std::invalid_argument);
}

}  // namespace
