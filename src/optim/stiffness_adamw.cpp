#include "optim/stiffness_adamw.hpp"

#include <cmath>

#include "format/effective_grid.hpp"

namespace altgrad::optim {

StiffnessAdamW::StiffnessAdamW(std::size_t parameter_count, const AdamWConfig& adamw, const BitSpaceConfig& config,
                               std::vector<ParameterRange> ranges)
    : BitSpaceOptimizer("stiffness_adamw", parameter_count, adamw, config, std::move(ranges)) {}

std::vector<Hyperparameter> StiffnessAdamW::own_hyperparameters() const {
  return {{"stiffness_power", static_cast<double>(config().stiffness_power)},
          {"precondition_update", config().precondition == Precondition::update ? 1.0 : 0.0}};
}

void StiffnessAdamW::update_range(std::size_t index, const ParameterRange& range, std::span<const GridSpan> spans,
                                  float* p, const float* g, const AdamScalars& s, std::int64_t) {
  const format::Format& f = grid(index).format;
  // AdamW's decoupled decay at AdamW's rate: with precondition = "update" lr counts grid steps,
  // and lr·wd would shrink every weight by as much as its largest step. At p = 0 lr is this
  // tensor's AdamW rate, and the decay takes it, as gridwalk's intended update does.
  const int exponent = config().stiffness_power;
  const auto decay = decay_factor(range, exponent == 0 ? s.lr : static_cast<float>(adamw_rate(s.lr)));
  const bool on_grad = config().precondition == Precondition::grad;
  float* m = exp_avg() + range.offset;
  float* v = exp_avg_sq() + range.offset;
  const std::size_t count = spans.size();
#pragma omp parallel for schedule(static)
  for (std::size_t b = 0; b < count; ++b) {
    const GridSpan span = spans[b];
    const std::size_t n = span.end - span.begin;
    float* w = p + span.begin;
    float* ms = m + span.begin;
    float* vs = v + span.begin;
    const float* gs = g + span.begin;
    float factor[kMaxGridSpan];
    span_spacing(f, w, n, span.scale, factor);
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) {
      const float stiffness = factor[i];
      const float power = exponent == 0 ? 1.0f : exponent == 1 ? stiffness : stiffness * stiffness;
      const float grad = on_grad ? gs[i] * power : gs[i];
      w[i] *= decay;
      const float update = -s.step_size * adam_direction(grad, ms[i], vs[i], s);
      w[i] += on_grad ? update : update * power;
    }
  }
}

}  // namespace altgrad::optim
