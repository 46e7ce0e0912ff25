#include "optim/madam.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "format/philox.hpp"

namespace altgrad::optim {

Madam::Madam(std::size_t parameter_count, const AdamWConfig& adamw, const BitSpaceConfig& config,
             std::vector<ParameterRange> ranges, bool integer_exponents)
    : BitSpaceOptimizer(integer_exponents ? "madam_int" : "madam", parameter_count, adamw, config, std::move(ranges)),
      integer_(integer_exponents),
      bound_(add_state("weight_bound")) {
  if (!(config.madam_p_scale > 0.0f) || !(config.madam_g_bound > 0.0f) || !(config.madam_beta >= 0.0f) ||
      !(config.madam_beta < 1.0f)) {
    throw std::invalid_argument(std::string(name()) + ": madam_p_scale and madam_g_bound must be > 0 and madam_beta in [0, 1)");
  }
}

std::vector<Hyperparameter> Madam::own_hyperparameters() const {
  return {{"madam_p_scale", config().madam_p_scale},
          {"madam_g_bound", config().madam_g_bound},
          {"madam_beta", config().madam_beta}};
}

void Madam::update_range(std::size_t, const ParameterRange& range, std::span<const GridSpan>, float* p,
                         const float* g, const AdamScalars& s, std::int64_t step) {
  float* v = exp_avg_sq() + range.offset;
  float* bound = state_values(bound_).data() + range.offset;
  if (step == 1 && range.size > 0) {
    // B = p_scale · RMS of the tensor before its first update, summed in order: thread invariant.
    double sum = 0.0;
    for (std::size_t i = 0; i < range.size; ++i) sum += static_cast<double>(p[i]) * p[i];
    const auto b = static_cast<float>(config().madam_p_scale * std::sqrt(sum / static_cast<double>(range.size)));
    std::fill(bound, bound + range.size, b);
  }
  const float beta = config().madam_beta;
  const auto bias_correction = static_cast<float>(1.0 - std::pow(static_cast<double>(beta), static_cast<double>(step)));
  const float g_bound = config().madam_g_bound;
  const float lr = s.lr;
  const bool integer = integer_;
  const float octaves_per_nat = static_cast<float>(1.0 / std::numbers::ln2);
  const std::uint64_t key = rounding_key();
  const auto stream = static_cast<std::uint64_t>(step);
  const std::size_t offset = range.offset;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < range.size; ++i) {
    v[i] = beta * v[i] + (1.0f - beta) * g[i] * g[i];
    const float rms = std::sqrt(v[i] / bias_correction);
    const float normalized = rms > 0.0f ? std::clamp(g[i] / rms, -g_bound, g_bound) : 0.0f;
    const float sign = p[i] > 0.0f ? 1.0f : (p[i] < 0.0f ? -1.0f : 0.0f);
    const float exponent = -lr * normalized * sign;
    if (integer) {
      const float octaves = stochastic_round(exponent * octaves_per_nat, format::philox_word(key, stream, offset + i));
      p[i] = std::ldexp(p[i], static_cast<int>(octaves));
    } else {
      p[i] *= std::exp(exponent);
    }
    p[i] = std::clamp(p[i], -bound[i], bound[i]);
  }
}

}  // namespace altgrad::optim
