#include "train/gradient_reduction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "format/parse.hpp"
#include "quant/quantize.hpp"

namespace altgrad::train {
namespace {

constexpr int kMaxScaleExponent = 127;  // 2^127 · fl(1/fl(√M)) is a finite float for every M

// s for a finite A > 0: 2^k · fl(1/fl(√M)) with k = floor(log2(max_finite / A)) exactly, the
// largest k with A · 2^k <= max_finite (k from the two exponents, less one where A's significand
// exceeds max finite's), at most kMaxScaleExponent.
float scale_for(float amax, float max_finite, int micro_batches) {
  int k = std::ilogb(max_finite) - std::ilogb(amax);
  if (std::ldexp(static_cast<double>(amax), k) > static_cast<double>(max_finite)) --k;
  k = std::min(k, kMaxScaleExponent);
  return std::ldexp(1.0f / std::sqrt(static_cast<float>(micro_batches)), k);
}

// Rounds every value of `values` onto the grid of `f` (to nearest even, scale 1), adding what the
// rounding did to `stats`.
void round_onto(const format::Format& f, std::span<float> values, ReductionStats& stats) {
  quant::QuantizeOptions options;
  options.error_sums = quant::ErrorSums::skip;
  const quant::QuantStats q = quant::quantize_in_place(f, values, options);
  stats.roundings += values.size();
  stats.overflow += q.overflow;
  stats.underflow += q.underflow;
}

}  // namespace

GradientReduction::GradientReduction(const format::Format& f, config::GradReduceSum sum,
                                     std::vector<model::Slot> tensors, std::size_t size, int micro_batches)
    : format_(f),
      sum_(sum),
      tensors_(std::move(tensors)),
      size_(size),
      micro_batches_(micro_batches),
      buffers_(static_cast<std::size_t>(std::max(micro_batches, 0)) * size),
      scales_(tensors_.size(), 1.0f) {
  if (!f.has_sign) throw std::invalid_argument("gradient reduction: the format must be signed");
  if (micro_batches < 1) throw std::invalid_argument("gradient reduction: needs at least one micro-batch");
  for (const model::Slot& t : tensors_) {
    if (t.offset + t.size > size) throw std::invalid_argument("gradient reduction: a tensor lies outside the buffer");
  }
}

std::span<float> GradientReduction::micro_batch(int m) {
  return std::span<float>(buffers_).subspan(static_cast<std::size_t>(m) * size_, size_);
}

ReductionStats GradientReduction::reduce(std::span<float> out) {
  if (out.size() != size_) throw std::invalid_argument("gradient reduction: the output has the wrong size");
  const int M = micro_batches_;
  const float max_finite = format_.max_finite();
  ReductionStats stats;
  std::vector<std::uint8_t> non_finite;  // a tensor's elements where some g_m is NaN or ±Inf
  for (std::size_t t = 0; t < tensors_.size(); ++t) {
    const model::Slot slot = tensors_[t];
    if (slot.size == 0) continue;
    const auto part = [&](int m) { return slot.in(micro_batch(m)); };

    // 1. A, the largest magnitude of every micro-batch's gradient; NaN and ±Inf make it +Inf.
    float amax = 0.0f;
    bool finite = true;
    for (int m = 0; m < M; ++m) {
      for (const float v : part(m)) {
        const float a = std::fabs(v);
        finite = finite && a <= std::numeric_limits<float>::max();
        amax = std::max(amax, a);
      }
    }
    // 2. The scale, shared by the micro-batches; the previous one where A is 0 or not finite.
    if (finite && amax > 0.0f) scales_[t] = scale_for(amax, max_finite, M);
    const float s = scales_[t];
    if (!finite) {
      non_finite.assign(slot.size, 0);
      for (int m = 0; m < M; ++m) {
        const std::span<float> g = part(m);
        for (std::size_t i = 0; i < g.size(); ++i) non_finite[i] |= std::isfinite(g[i]) ? 0 : 1;
      }
    }
    // 3. q_m = round(fl(g_m · s)), in place.
    for (int m = 0; m < M; ++m) {
      const std::span<float> g = part(m);
      for (float& v : g) v *= s;
      round_onto(format_, g, stats);
    }
    // 4. The left fold in micro-batch order, into micro-batch 0's buffer.
    const std::span<float> partial = part(0);
    for (int m = 1; m < M; ++m) {
      const std::span<const float> q = part(m);
      for (std::size_t i = 0; i < partial.size(); ++i) partial[i] += q[i];
      if (sum_ == config::GradReduceSum::in_format) round_onto(format_, partial, stats);
    }
    // 5. ĝ = P_M / (s·M).
    const float divisor = s * static_cast<float>(M);
    const std::span<float> result = slot.in(out);
    for (std::size_t i = 0; i < result.size(); ++i) result[i] = partial[i] / divisor;
    if (!finite) {
      for (std::size_t i = 0; i < result.size(); ++i) {
        if (non_finite[i]) result[i] = std::numeric_limits<float>::quiet_NaN();
      }
    }
  }
  return stats;
}

std::optional<GradientReduction> make_gradient_reduction(const config::TrainConfig& c,
                                                         const model::ParameterLayout& layout) {
  if (c.grad_reduce_format.empty()) return std::nullopt;
  std::vector<model::Slot> tensors;
  for (const model::TensorSpec& spec : layout.tensors()) tensors.push_back(spec.slot);
  return GradientReduction(format::make_format(format::parse_format(c.grad_reduce_format)), c.grad_reduce_sum,
                           std::move(tensors), layout.size(), c.gradient_accumulation_steps);
}

}  // namespace altgrad::train
