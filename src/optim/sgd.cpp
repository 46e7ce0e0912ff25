#include "optim/sgd.hpp"

#include <stdexcept>
#include <string>

namespace altgrad::optim {

Sgd::Sgd(std::size_t parameter_count, const SgdConfig& config, std::vector<ParameterRange> ranges)
    : Optimizer("SGD", parameter_count, std::move(ranges)), config_(config) {
  if (!(config_.momentum >= 0.0f) || !(config_.weight_decay >= 0.0f)) {
    throw std::invalid_argument("SGD: momentum " + std::to_string(config_.momentum) + " and weight decay " +
                                std::to_string(config_.weight_decay) + " must be >= 0");
  }
  if (config_.nesterov && config_.momentum == 0.0f) {
    throw std::invalid_argument("SGD: nesterov needs momentum > 0");
  }
  for (const auto& range : this->ranges()) {
    if (range.adamw_only) throw std::invalid_argument("SGD: a parameter range is marked adamw_only");
  }
  if (config_.momentum != 0.0f) buffer_ = add_state("momentum_buffer");
}

std::vector<Hyperparameter> Sgd::hyperparameters() const {
  return {{"momentum", config_.momentum}, {"nesterov", config_.nesterov ? 1.0 : 0.0}, {"weight_decay", config_.weight_decay}};
}

void Sgd::step(std::span<float> params, std::span<const float> grads, float lr) {
  check_step_sizes("SGD", params.size(), grads.size());
  const bool first = advance_step() == 1;
  if (config_.momentum == 0.0f) {
    plain_step(params, grads, lr);
  } else {
    momentum_step(params, grads, lr, first);
  }
}

void Sgd::plain_step(std::span<float> params, std::span<const float> grads, float lr) const {
  float* p = params.data();
  const float* g = grads.data();
  for (const auto& range : ranges()) {
    const float wd = range.decay ? config_.weight_decay : 0.0f;
    const std::size_t end = range.offset + range.size;
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = range.offset; i < end; ++i) {
      const float d = g[i] + wd * p[i];
      p[i] += -lr * d;
    }
  }
}

void Sgd::momentum_step(std::span<float> params, std::span<const float> grads, float lr, bool first) {
  float* p = params.data();
  const float* g = grads.data();
  float* b = state_values(buffer_).data();
  // PyTorch starts the buffer as a copy of the first (decayed) gradient rather than decaying a zero
  // buffer; keeping = 0 there makes the first step b = g exactly.
  const float keep = first ? 0.0f : config_.momentum;
  const float momentum = config_.momentum;
  const bool nesterov = config_.nesterov;
  for (const auto& range : ranges()) {
    const float wd = range.decay ? config_.weight_decay : 0.0f;
    const std::size_t end = range.offset + range.size;
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = range.offset; i < end; ++i) {
      const float d = g[i] + wd * p[i];
      b[i] = b[i] * keep + d;
      const float direction = nesterov ? d + momentum * b[i] : b[i];
      p[i] += -lr * direction;
    }
  }
}

}  // namespace altgrad::optim
