#include "optim/gridwalk.hpp"

#include <cmath>

#include "format/effective_grid.hpp"
#include "format/philox.hpp"

namespace altgrad::optim {

GridWalk::GridWalk(std::size_t parameter_count, const AdamWConfig& adamw, const BitSpaceConfig& config,
                   std::vector<ParameterRange> ranges)
    : BitSpaceOptimizer("gridwalk", parameter_count, adamw, config, std::move(ranges)) {}

void GridWalk::update_range(std::size_t index, const ParameterRange& range, std::span<const GridSpan> spans, float* p,
                            const float* g, const AdamScalars& s, std::int64_t step) {
  const format::Format& f = grid(index).format;
  const float decay_rate = range.decay ? static_cast<float>(static_cast<double>(s.lr) * adamw().weight_decay) : 0.0f;
  float* m = exp_avg() + range.offset;
  float* v = exp_avg_sq() + range.offset;
  const std::uint64_t key = rounding_key();
  const auto stream = static_cast<std::uint64_t>(step);
  const std::size_t count = spans.size();
#pragma omp parallel for schedule(static)
  for (std::size_t b = 0; b < count; ++b) {
    const GridSpan span = spans[b];
    for (std::size_t i = span.begin; i < span.end; ++i) {
      m[i] += (1.0f - s.beta1) * (g[i] - m[i]);
      v[i] = v[i] * s.beta2 + (1.0f - s.beta2) * g[i] * g[i];
      const float denom = std::sqrt(v[i]) / s.bias_correction2_sqrt + s.eps;
      const float intended = -decay_rate * p[i] - s.step_size * (m[i] / denom);
      const float stiffness = format::scaled_spacing(f, p[i], span.scale);
      const float steps = stochastic_round(intended / stiffness, format::philox_word(key, stream, range.offset + i));
      p[i] += steps * stiffness;
    }
  }
}

}  // namespace altgrad::optim
