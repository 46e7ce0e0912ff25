#pragma once
// Small models, parameters and batches for the model tests.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

#include "model/activations.hpp"
#include "model/config.hpp"
#include "model/gpt.hpp"
#include "ops/test_tensors.hpp"

namespace altgrad::model_test {

// The gradient-check size: n_layer 2, n_head 2, n_embd 8, block_size 8, byte vocabulary.
inline model::GptConfig tiny_config(model::Norm norm = model::Norm::layernorm, model::Mlp mlp = model::Mlp::gelu,
                                    bool bias = true) {
  model::GptConfig config;
  config.n_layer = 2;
  config.n_head = 2;
  config.n_embd = 8;
  config.block_size = 8;
  config.vocab_size = 256;
  config.bias = bias;
  config.norm = norm;
  config.mlp = mlp;
  return config;
}

// Parameters far from nanoGPT's initialization, so that every nonlinearity is exercised and no
// gradient is tiny: matrices uniform in [-0.4, 0.4], biases in [-0.2, 0.2], norm weights in
// [0.5, 1.5]. Every value is exactly representable as a float.
template <typename Scalar>
void randomize_parameters(model::Gpt<Scalar>& model, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  for (const model::TensorSpec& spec : model.layout().tensors()) {
    double lo = -0.4, hi = 0.4;
    if (spec.role == model::ParameterRole::bias) lo = -0.2, hi = 0.2;
    if (spec.role == model::ParameterRole::norm_weight) lo = 0.5, hi = 1.5;
    std::uniform_real_distribution<double> uniform(lo, hi);
    for (Scalar& value : spec.slot.in(model.parameters())) value = static_cast<float>(uniform(generator));
  }
}

inline std::vector<std::int32_t> tokens_for(const model::GptConfig& config, std::size_t count, std::uint64_t seed) {
  return ops_test::random_tokens(count, config.vocab_size, seed);
}

template <typename T>
std::vector<std::remove_const_t<T>> to_vector(std::span<T> values) {
  return {values.begin(), values.end()};
}

template <typename To, typename From>
void copy_parameters(const model::Gpt<From>& from, model::Gpt<To>& to) {
  std::transform(from.parameters().begin(), from.parameters().end(), to.parameters().begin(),
                 [](From v) { return static_cast<To>(v); });
}

// One batch and its targets.
struct Batch {
  std::size_t B, T;
  std::vector<std::int32_t> tokens, targets;
};

inline Batch make_batch(const model::GptConfig& config, std::size_t B, std::size_t T, std::uint64_t seed) {
  return {B, T, tokens_for(config, B * T, seed), tokens_for(config, B * T, seed + 1)};
}

}  // namespace altgrad::model_test
