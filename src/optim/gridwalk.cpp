#include "optim/gridwalk.hpp"

#include <algorithm>
#include <cmath>

#include "format/effective_grid.hpp"
#include "quant/random_words.hpp"

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
    const std::size_t n = span.end - span.begin;
    float* w = p + span.begin;
    // Three passes over the span, each a loop the compiler vectorizes: the intended update, S(w),
    // then the rounded move.
    float intended[kMaxGridSpan], stiffness[kMaxGridSpan];
    std::uint32_t words[kMaxGridSpan];
    {
      float* ms = m + span.begin;
      float* vs = v + span.begin;
      const float* gs = g + span.begin;
#pragma omp simd
      for (std::size_t i = 0; i < n; ++i) {
        ms[i] += (1.0f - s.beta1) * (gs[i] - ms[i]);
        vs[i] = vs[i] * s.beta2 + (1.0f - s.beta2) * gs[i] * gs[i];
        const float denom = std::sqrt(vs[i]) / s.bias_correction2_sqrt + s.eps;
        intended[i] = -decay_rate * w[i] - s.step_size * (ms[i] / denom);
      }
    }
    if (const auto sink = intended_sink(); !sink.empty()) {
      std::copy(intended, intended + n, sink.data() + range.offset + span.begin);
    }
    span_spacing(f, w, n, span.scale, stiffness);
    quant::fill_random(key, stream, range.offset + span.begin, {words, n});
    // Beyond 2^23 steps a float step count has no fraction left to round, and far beyond it (a
    // subnormal step of bf16 near zero) it would overflow: the intended update is taken as it is.
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) {
      const float steps = intended[i] / stiffness[i];
      const float move = stochastic_round(steps, words[i]) * stiffness[i];
      w[i] += std::fabs(steps) < 0x1p23f ? move : intended[i];
    }
  }
}

}  // namespace altgrad::optim
