#include "optim/adamw.hpp"

#include <algorithm>
#include <cmath>

#include "optim/adam_moments.hpp"
#include "quant/chunked_reduction.hpp"

namespace altgrad::optim {
namespace {

// The gradient norm's chunks: at least 2^16 elements, at most 4096 chunks.
constexpr quant::Chunking kNormChunking{std::size_t{1} << 16, 4096};

}  // namespace

AdamW::AdamW(std::size_t parameter_count, const AdamWConfig& config, std::vector<ParameterRange> ranges)
    : Optimizer("AdamW", parameter_count, std::move(ranges)),
      config_(config),
      m_(add_state("exp_avg")),
      v_(add_state("exp_avg_sq")) {}

std::vector<Hyperparameter> AdamW::hyperparameters() const {
  return {{"beta1", config_.beta1}, {"beta2", config_.beta2}, {"eps", config_.eps}, {"weight_decay", config_.weight_decay}};
}

void AdamW::step(std::span<float> params, std::span<const float> grads, float lr) {
  check_step_sizes("AdamW", params.size(), grads.size());
  const AdamScalars s = adam_scalars(config_, lr, advance_step());
  float* p = params.data();
  const float* g = grads.data();
  float* m = state_values(m_).data();
  float* v = state_values(v_).data();
  for (const auto& range : ranges()) {
    const float decay = range.decay ? static_cast<float>(1.0 - static_cast<double>(lr) * config_.weight_decay) : 1.0f;
    const std::size_t end = range.offset + range.size;
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = range.offset; i < end; ++i) {
      p[i] *= decay;
      p[i] += -s.step_size * adam_direction(g[i], m[i], v[i], s);
    }
  }
}

bool clips(double norm, double max_norm) { return max_norm > 0.0 && max_norm / (norm + 1e-6) < 1.0; }

double clip_grad_norm(std::span<float> grads, double max_norm) {
  const std::size_t n = grads.size();
  const double total = quant::reduce_in_chunks<double, kNormChunking>(n, [&](std::size_t begin, std::size_t end) {
    double sum = 0.0;
    for (std::size_t i = begin; i < end; ++i) sum += static_cast<double>(grads[i]) * grads[i];
    return sum;
  });
  const double norm = std::sqrt(total);
  if (clips(norm, max_norm)) {
    const auto scale = static_cast<float>(max_norm / (norm + 1e-6));
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < n; ++i) grads[i] *= scale;
  }
  return norm;
}

}  // namespace altgrad::optim
