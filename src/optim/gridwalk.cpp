#include "optim/gridwalk.hpp"

#include <algorithm>
#include <cmath>

#include "format/codec.hpp"
#include "format/effective_grid.hpp"
#include "quant/quantize.hpp"
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
  CodeTensor* codes = codes_ ? codes_->find(index) : nullptr;
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
        intended[i] = -decay_rate * w[i] - s.step_size * adam_direction(gs[i], ms[i], vs[i], s);
      }
    }
    if (const auto sink = intended_sink(); !sink.empty()) {
      std::copy(intended, intended + n, sink.data() + range.offset + span.begin);
    }
    span_spacing(f, w, n, span.scale, stiffness);
    quant::fill_random(key, stream, range.offset + span.begin, {words, n});
    if (codes) {
      move_codes(*codes, span.begin, n, intended, words, w);
      continue;
    }
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

// The code-only step: w + Δw stochastically rounded onto the tensor's grid, up with probability
// (x − lo)/(hi − lo) for the grid values lo < x < hi around it. Inside w's binade that is the step
// above, k = floor(Δk) or floor(Δk) + 1 values with E[k] = Δk; across binades it keeps
// E[new value] = w + Δw, which k values of w's spacing would not. Clamped to the format's finite
// range; −0 is stored as +0.
void GridWalk::move_codes(CodeTensor& t, std::size_t begin, std::size_t n, float* intended,
                          const std::uint32_t* words, float* w) const {
  const format::Format& f = t.format;
  const float top = f.max_finite() / t.scale, bottom = f.has_sign ? -top : f.min_positive() / t.scale;
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) intended[i] = std::clamp(w[i] + intended[i], bottom, top);
  quant::QuantStats stats;
  quant::quantize_block(f, format::Rounding::stochastic, intended, w, n, t.scale, words, nullptr, stats);
  std::uint32_t codes[kMaxGridSpan];
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) w[i] = w[i] == 0.0f ? 0.0f : w[i];  // -0 as +0
  if (format::has_simple_code(f)) {
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) codes[i] = format::code_of_simple_grid_value(f, format::float_bits(w[i] * t.scale));
  } else {
    for (std::size_t i = 0; i < n; ++i) codes[i] = format::code_of_grid_value(f, format::float_bits(w[i] * t.scale));
  }
  if (t.code_bytes() == 1) {
    std::uint8_t* out = t.codes.data() + begin;
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(codes[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) t.set_code(begin + i, codes[i]);
  }
}

}  // namespace altgrad::optim
