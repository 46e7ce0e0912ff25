#include "diag/value_profile.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace altgrad::diag {
namespace {

constexpr std::uint32_t kMagnitude = 0x7FFFFFFFu;
constexpr std::uint32_t kInfBits = 0x7F800000u;
constexpr std::size_t kBucketsPerBinade = 8;

}  // namespace

void ValueProfile::add(std::span<const float> x) {
  // This call's own moments (two passes), then merged into the profile's.
  std::uint64_t n = 0;
  double sum = 0;
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (const float v : x) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(v) & kMagnitude;
    if (bits >= kInfBits) continue;
    ++n;
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    ++buckets_[bits >> 20];
  }
  count_ += x.size();
  if (n == 0) return;
  const double mean = sum / static_cast<double>(n);
  double m2 = 0;
  for (const float v : x) {
    if ((std::bit_cast<std::uint32_t>(v) & kMagnitude) >= kInfBits) continue;
    const double d = v - mean;
    m2 += d * d;
  }
  if (finite_ == 0) {
    min_ = lo;
    max_ = hi;
  } else {
    min_ = std::min(min_, lo);
    max_ = std::max(max_, hi);
  }
  const double total = static_cast<double>(finite_ + n);
  const double delta = mean - mean_;
  m2_ += m2 + delta * delta * static_cast<double>(finite_) * static_cast<double>(n) / total;
  mean_ += delta * static_cast<double>(n) / total;
  finite_ += n;
}

double ValueProfile::mean() const { return finite_ ? mean_ : std::nan(""); }
double ValueProfile::stddev() const { return finite_ ? std::sqrt(m2_ / static_cast<double>(finite_)) : std::nan(""); }
float ValueProfile::min() const { return finite_ ? min_ : std::nanf(""); }
float ValueProfile::max() const { return finite_ ? max_ : std::nanf(""); }

float ValueProfile::bucket_edge(std::size_t bucket) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bucket << 20));
}

double ValueProfile::abs_percentile(double p) const {
  if (finite_ == 0) return std::nan("");
  const auto rank = static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(finite_)));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= std::max<std::uint64_t>(rank, 1)) return bucket_edge(b);
  }
  return bucket_edge(kBuckets - 1);
}

Log2Histogram ValueProfile::log2_histogram(int lo, int hi) const {
  Log2Histogram out;
  out.lo = lo;
  out.hi = hi;
  out.buckets.assign(static_cast<std::size_t>(hi - lo), 0);
  out.non_finite = non_finite();
  for (std::size_t b = 0; b < kBuckets; ++b) {
    if (buckets_[b] == 0) continue;
    // Exponent field 0 (buckets [0, 8)) holds zeros and subnormals; field e the binade e − 127.
    const int binade = static_cast<int>(b / kBucketsPerBinade) - 127;
    if (b < kBucketsPerBinade || binade < lo) {
      out.zero_or_below += buckets_[b];
    } else if (binade >= hi) {
      out.above += buckets_[b];
    } else {
      out.buckets[static_cast<std::size_t>(binade - lo)] += buckets_[b];
    }
  }
  return out;
}

}  // namespace altgrad::diag
