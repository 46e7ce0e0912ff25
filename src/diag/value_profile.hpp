#pragma once
// The distribution of the values that pass one point in one step, over all its calls (a step's
// micro-batches), for deciding where a narrow format fits (docs/quantization.md, "Value
// profiles"):
//   count and non_finite (NaN and ±Inf, left out of everything else);
//   mean and standard deviation (population, divisor n), min and max, in double, calls merged by
//   Chan et al.'s pairwise update in call order;
//   a histogram of |x| at 1/8 binade: an element's bucket is its float32 magnitude bits >> 20, the
//   exponent field and the top 3 mantissa bits, so bucket b holds [edge(b), edge(b + 1)) with
//   edge(b) = the float whose bits are b << 20. Zero and the subnormals below 2^−129 share bucket 0.
// Percentiles of |x| come from the histogram: the lower edge of the bucket holding the nearest-rank
// percentile, within a factor 2^(1/8) (9%) below the exact value.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "diag/log2_histogram.hpp"

namespace altgrad::diag {

class ValueProfile {
 public:
  static constexpr std::size_t kBuckets = 2048;

  void add(std::span<const float> x);

  std::uint64_t count() const { return count_; }
  std::uint64_t non_finite() const { return count_ - finite_; }
  std::uint64_t finite() const { return finite_; }
  double mean() const;    // NaN without finite values
  double stddev() const;  // NaN without finite values
  float min() const;      // NaN without finite values
  float max() const;

  // The p-th percentile of |x| over the finite values (0 < p ≤ 100), nearest rank: the lower edge
  // of the bucket holding the ⌈p·n/100⌉-th smallest |x|. NaN without finite values.
  double abs_percentile(double p) const;

  // Counts of floor(log2|x|) as log2_histogram.hpp defines them, for lo ≤ −126 < hi: zeros,
  // float32 subnormals and values below 2^lo are zero_or_below. The fixed default range,
  // [2^−48, 2^16), holds the activations, weights and gradients of the bench's models, and lets a
  // report stack the steps into one heatmap.
  Log2Histogram log2_histogram(int lo = -48, int hi = 16) const;

  const std::array<std::uint64_t, kBuckets>& buckets() const { return buckets_; }
  static float bucket_edge(std::size_t bucket);

 private:
  std::uint64_t count_ = 0, finite_ = 0;
  double mean_ = 0, m2_ = 0;  // over the finite values
  float min_ = 0, max_ = 0;
  std::array<std::uint64_t, kBuckets> buckets_{};
};

}  // namespace altgrad::diag
