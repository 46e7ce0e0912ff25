#pragma once
// A histogram as TensorBoard stores it (TensorFlow's HistogramProto), and how to build one from a
// tensor's values.
//
// Buckets are given by their right edges e_0 < e_1 < … < e_{n−1}:
//   bucket 0      counts v < e_0
//   bucket i      counts e_{i−1} ≤ v < e_i,   for 0 < i < n − 1
//   bucket n − 1  counts v ≥ e_{n−2}          (open on the right: it also takes v ≥ e_{n−1})
// TensorBoard draws the first bucket from `min` and the last one up to `max`, so every counted value
// is on the chart whatever edges the caller picks.
#include <span>
#include <vector>

namespace altgrad::io {

struct TensorBoardHistogram {
  std::vector<double> right_edges;  // strictly increasing
  std::vector<double> counts;       // one per edge; doubles, as HistogramProto stores them
  double min = 0;                   // smallest counted value (0 when none)
  double max = 0;                   // largest counted value (0 when none)
  double num = 0;                   // values counted, the sum of counts
  double sum = 0;                   // Σ v
  double sum_squares = 0;           // Σ v²
};

// Counts `values` into buckets with the given right edges. NaN and ±Inf are skipped (min, max and the
// sums stay finite; log2_histogram counts non-finite values). Sums are accumulated in double, in
// order, so the result is deterministic.
// Throws std::invalid_argument unless right_edges is non-empty and strictly increasing.
TensorBoardHistogram tensorboard_histogram(std::span<const float> values, std::span<const double> right_edges);

// Throws std::invalid_argument unless right_edges is non-empty and strictly increasing and counts has
// one entry per edge: the shape TensorBoard can draw.
void check_tensorboard_histogram(const TensorBoardHistogram& histogram);

}  // namespace altgrad::io
