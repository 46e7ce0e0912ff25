#include "io/tensorboard_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace altgrad::io {
namespace {

void check_right_edges(std::span<const double> right_edges) {
  if (right_edges.empty()) throw std::invalid_argument("TensorBoard histogram: no bucket edges");
  for (std::size_t i = 1; i < right_edges.size(); ++i) {
    // Written as "not less" so a NaN edge is rejected too.
    if (!(right_edges[i - 1] < right_edges[i]))
      throw std::invalid_argument("TensorBoard histogram: bucket edges not strictly increasing at index " +
                                  std::to_string(i));
  }
}

// The bucket of v: the first whose right edge exceeds v, or the last one (open on the right).
std::size_t bucket_of(double v, std::span<const double> right_edges) {
  const auto above = std::upper_bound(right_edges.begin(), right_edges.end(), v);
  const auto index = static_cast<std::size_t>(above - right_edges.begin());
  return std::min(index, right_edges.size() - 1);
}

}  // namespace

TensorBoardHistogram tensorboard_histogram(std::span<const float> values, std::span<const double> right_edges) {
  check_right_edges(right_edges);
  TensorBoardHistogram h;
  h.right_edges.assign(right_edges.begin(), right_edges.end());
  h.counts.assign(right_edges.size(), 0.0);
  for (const float value : values) {
    if (!std::isfinite(value)) continue;
    const double v = value;
    h.min = h.num == 0 ? v : std::min(h.min, v);
    h.max = h.num == 0 ? v : std::max(h.max, v);
    h.num += 1;
    h.sum += v;
    h.sum_squares += v * v;
    h.counts[bucket_of(v, right_edges)] += 1;
  }
  return h;
}

void check_tensorboard_histogram(const TensorBoardHistogram& histogram) {
  check_right_edges(histogram.right_edges);
  if (histogram.counts.size() != histogram.right_edges.size())
    throw std::invalid_argument("TensorBoard histogram: " + std::to_string(histogram.counts.size()) + " counts for " +
                                std::to_string(histogram.right_edges.size()) + " bucket edges");
}

}  // namespace altgrad::io
