#include "diag/spike_detectors.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace altgrad::diag {

LossSpikeDetector::LossSpikeDetector(double ratio) : ratio_(ratio) {
  if (!(ratio > 0)) throw std::invalid_argument("LossSpikeDetector: ratio must be > 0, got " + std::to_string(ratio));
}

bool LossSpikeDetector::observe(double loss) {
  const bool spike = previous_.has_value() && loss > ratio_ * *previous_;
  previous_ = loss;
  return spike;
}

GradNormSpikeDetector::GradNormSpikeDetector(GradNormSpikeOptions options) : options_(options) {
  if (!(options_.ratio > 0)) {
    throw std::invalid_argument("GradNormSpikeDetector: ratio must be > 0, got " + std::to_string(options_.ratio));
  }
  if (options_.min_history < 1 || options_.min_history > options_.window) {
    throw std::invalid_argument("GradNormSpikeDetector: need 1 <= min_history <= window, got min_history = " +
                                std::to_string(options_.min_history) + ", window = " +
                                std::to_string(options_.window));
  }
  ring_.assign(options_.window, 0.0);
  scratch_.reserve(options_.window);
}

bool GradNormSpikeDetector::observe(double norm) {
  if (!std::isfinite(norm)) return false;
  const bool spike = size_ >= options_.min_history && norm > options_.ratio * median();
  record(norm);
  return spike;
}

void GradNormSpikeDetector::record(double norm) {
  ring_[next_] = norm;
  next_ = (next_ + 1) % options_.window;
  size_ = std::min(size_ + 1, options_.window);
}

double GradNormSpikeDetector::median() const {
  if (size_ == 0) return std::numeric_limits<double>::quiet_NaN();
  // Order does not matter for a median, so the filled slots are taken as they lie in the ring.
  scratch_.assign(ring_.begin(), ring_.begin() + static_cast<std::ptrdiff_t>(size_));
  const auto middle = scratch_.begin() + static_cast<std::ptrdiff_t>(size_ / 2);
  std::nth_element(scratch_.begin(), middle, scratch_.end());
  if (size_ % 2 == 1) return *middle;
  // Even count: the lower middle value is the largest of the elements before `middle`.
  const double lower = *std::max_element(scratch_.begin(), middle);
  return 0.5 * (lower + *middle);
}

std::vector<double> GradNormSpikeDetector::history() const {
  std::vector<double> oldest_first;
  oldest_first.reserve(size_);
  const std::size_t oldest = size_ < options_.window ? 0 : next_;
  for (std::size_t i = 0; i < size_; ++i) oldest_first.push_back(ring_[(oldest + i) % options_.window]);
  return oldest_first;
}

void GradNormSpikeDetector::restore(std::span<const double> norms) {
  for (const double norm : norms) {
    if (!std::isfinite(norm)) {
      throw std::invalid_argument("GradNormSpikeDetector::restore: non-finite norm " + std::to_string(norm) +
                                  " in the history");
    }
  }
  next_ = 0;
  size_ = 0;
  const std::size_t skip = norms.size() > options_.window ? norms.size() - options_.window : 0;
  for (const double norm : norms.subspan(skip)) record(norm);
}

}  // namespace altgrad::diag
