#include "optim/adamw.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace altgrad::optim {
namespace {

constexpr std::size_t kNormChunk = 1 << 16;
constexpr std::size_t kMaxNormChunks = 4096;

}  // namespace

AdamW::AdamW(std::size_t parameter_count, const AdamWConfig& config, std::vector<ParameterRange> ranges)
    : config_(config), ranges_(std::move(ranges)), m_(parameter_count, 0.0f), v_(parameter_count, 0.0f) {
  std::size_t covered = 0;
  for (const auto& r : ranges_) {
    if (r.offset + r.size > parameter_count) {
      throw std::invalid_argument("AdamW: parameter range [" + std::to_string(r.offset) + ", " +
                                  std::to_string(r.offset + r.size) + ") exceeds " + std::to_string(parameter_count) +
                                  " parameters");
    }
    covered += r.size;
  }
  if (covered != parameter_count) {
    throw std::invalid_argument("AdamW: ranges cover " + std::to_string(covered) + " of " +
                                std::to_string(parameter_count) + " parameters");
  }
}

void AdamW::step(std::span<float> params, std::span<const float> grads, float lr) {
  if (params.size() != m_.size() || grads.size() != m_.size()) {
    throw std::invalid_argument("AdamW::step: expected " + std::to_string(m_.size()) + " parameters and gradients");
  }
  ++step_;
  const float b1 = config_.beta1, b2 = config_.beta2, eps = config_.eps;
  // PyTorch computes these scalars in double and applies them as floats.
  const double bias_correction1 = 1.0 - std::pow(static_cast<double>(b1), static_cast<double>(step_));
  const double bias_correction2 = 1.0 - std::pow(static_cast<double>(b2), static_cast<double>(step_));
  const auto step_size = static_cast<float>(lr / bias_correction1);
  const auto bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
  float* p = params.data();
  const float* g = grads.data();
  float* m = m_.data();
  float* v = v_.data();
  for (const auto& range : ranges_) {
    const float decay = range.decay ? static_cast<float>(1.0 - static_cast<double>(lr) * config_.weight_decay) : 1.0f;
    const std::size_t end = range.offset + range.size;
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = range.offset; i < end; ++i) {
      p[i] *= decay;
      m[i] += (1.0f - b1) * (g[i] - m[i]);  // lerp toward g, PyTorch's form for weights < 0.5
      v[i] = v[i] * b2 + (1.0f - b2) * g[i] * g[i];
      const float denom = std::sqrt(v[i]) / bias_correction2_sqrt + eps;
      p[i] += -step_size * (m[i] / denom);
    }
  }
}

void AdamW::restore(std::span<const float> m, std::span<const float> v, std::int64_t step) {
  if (m.size() != m_.size() || v.size() != v_.size() || step < 0) {
    throw std::invalid_argument("AdamW::restore: saved state has " + std::to_string(m.size()) + "/" +
                                std::to_string(v.size()) + " moments for " + std::to_string(m_.size()) +
                                " parameters (step " + std::to_string(step) + ")");
  }
  std::copy(m.begin(), m.end(), m_.begin());
  std::copy(v.begin(), v.end(), v_.begin());
  step_ = step;
}

double clip_grad_norm(std::span<float> grads, double max_norm) {
  const std::size_t n = grads.size();
  const std::size_t chunk = std::max(kNormChunk, (n + kMaxNormChunks - 1) / kMaxNormChunks);
  const std::size_t chunks = (n + chunk - 1) / chunk;
  double partial[kMaxNormChunks] = {};
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::size_t c = 0; c < chunks; ++c) {
    double sum = 0.0;
    const std::size_t end = std::min(n, (c + 1) * chunk);
    for (std::size_t i = c * chunk; i < end; ++i) sum += static_cast<double>(grads[i]) * grads[i];
    partial[c] = sum;
  }
  double total = 0.0;
  for (std::size_t c = 0; c < chunks; ++c) total += partial[c];
  const double norm = std::sqrt(total);
  if (max_norm > 0.0) {
    const double coefficient = max_norm / (norm + 1e-6);
    if (coefficient < 1.0) {
      const auto scale = static_cast<float>(coefficient);
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n; ++i) grads[i] *= scale;
    }
  }
  return norm;
}

}  // namespace altgrad::optim
