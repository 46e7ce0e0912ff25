#include "quant/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace altgrad::quant {

float amax_of(std::span<const float> x) {
  float amax = 0.0f;
  const std::size_t n = x.size();
#pragma omp parallel for simd reduction(max : amax) schedule(static) if (n > (1u << 16))
  for (std::size_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    amax = a > amax ? a : amax;  // NaN compares false and is skipped
  }
  return amax;
}

float scale_from_amax(const format::Format& f, float amax, int margin, float previous) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return previous;
  const double scale = static_cast<double>(f.max_finite()) / std::ldexp(static_cast<double>(amax), margin);
  // A tiny amax wants a scale beyond FP32: clamp to the largest float rather than produce Inf.
  return static_cast<float>(std::min(scale, static_cast<double>(std::numeric_limits<float>::max())));
}

DelayedScaling::DelayedScaling(const format::Format& f, std::size_t history_length,
                               AmaxAlgorithm algorithm, int margin)
    : format_(f), algorithm_(algorithm), margin_(margin), ring_(history_length, 0.0f) {
  if (history_length == 0) throw std::invalid_argument("delayed scaling: amax history length must be >= 1");
}

void DelayedScaling::record(float amax) {
  ++recorded_;
  const std::size_t size = ring_.size();
  if (filled_ < size) {
    ring_[(head_ + filled_) % size] = amax;
    ++filled_;
  } else {
    ring_[head_] = amax;
    head_ = (head_ + 1) % size;
  }
  float reduced = amax;
  if (algorithm_ == AmaxAlgorithm::max) {
    reduced = 0.0f;
    for (std::size_t i = 0; i < filled_; ++i) {
      const float a = ring_[(head_ + i) % size];
      // A non-finite amax poisons the window: the scale then stays put until it leaves.
      if (!std::isfinite(a)) {
        reduced = a;
        break;
      }
      reduced = std::max(reduced, a);
    }
  }
  scale_ = scale_from_amax(format_, reduced, margin_, scale_);
}

std::vector<float> DelayedScaling::history() const {
  std::vector<float> out(filled_);
  for (std::size_t i = 0; i < filled_; ++i) out[i] = ring_[(head_ + i) % ring_.size()];
  return out;
}

void DelayedScaling::restore(std::span<const float> history_oldest_first, float scale) {
  if (history_oldest_first.size() > ring_.size()) {
    throw std::invalid_argument("delayed scaling: saved history has " +
                                std::to_string(history_oldest_first.size()) +
                                " entries, more than the history length " + std::to_string(ring_.size()));
  }
  std::fill(ring_.begin(), ring_.end(), 0.0f);
  std::copy(history_oldest_first.begin(), history_oldest_first.end(), ring_.begin());
  head_ = 0;
  filled_ = history_oldest_first.size();
  recorded_ = filled_;
  scale_ = scale;
}

}  // namespace altgrad::quant
