#pragma once
// Histogram of log2|w| in integer buckets: where a tensor's magnitudes sit relative to a format's
// range (a format with exponent range [emin, emax] holds buckets emin..emax as normals).
//
// For a caller's range of exponents [lo, hi):
//   buckets[k − lo]  counts |w| in [2^k, 2^(k+1)),  for k = lo, …, hi − 1
//   zero_or_below    counts w = ±0 and 0 < |w| < 2^lo
//   above            counts finite |w| ≥ 2^hi
//   non_finite       counts ±Inf and NaN
// so every element is counted exactly once. The bucket of a value is floor(log2|w|) read from the
// float's exponent bits (for subnormals, from the position of the leading mantissa bit), never
// from a rounded log2, so powers of two and the values just below them land exactly.
// float32 holds |w| from 2^−149 (smallest subnormal) to below 2^128, so lo and hi must satisfy
// kMinLog2Bucket ≤ lo < hi ≤ kMaxLog2Bucket.
//
// Deterministic for any thread count: the counts are integers.
#include <cstdint>
#include <span>
#include <vector>

namespace altgrad::diag {

inline constexpr int kMinLog2Bucket = -149;  // floor(log2) of the smallest float32 subnormal
inline constexpr int kMaxLog2Bucket = 128;   // one past floor(log2) of the largest finite float32

struct Log2Histogram {
  int lo = -24;
  int hi = 8;
  std::vector<std::uint64_t> buckets;  // hi − lo counts, bucket k at index k − lo
  std::uint64_t zero_or_below = 0;
  std::uint64_t above = 0;
  std::uint64_t non_finite = 0;

  // The hi − lo + 1 bucket edges 2^lo, 2^(lo+1), …, 2^hi: bucket k − lo spans [edges[k − lo],
  // edges[k − lo + 1]). A histogram writer puts zero_or_below left of the first edge and above
  // right of the last.
  std::vector<double> edges() const;

  // Elements counted in all.
  std::uint64_t total() const;
};

// Throws std::invalid_argument unless kMinLog2Bucket ≤ lo < hi ≤ kMaxLog2Bucket.
Log2Histogram log2_histogram(std::span<const float> w, int lo = -24, int hi = 8);

// floor(log2|x|) for a finite nonzero float x, exact (subnormals included).
int floor_log2(float x);

}  // namespace altgrad::diag
