#include "diag/moments.hpp"

#include <cmath>
#include <limits>

#include "quant/chunked_reduction.hpp"

namespace altgrad::diag {
namespace {

struct CentredSums {
  double squares = 0;  // Σ (x − μ)²
  double fourths = 0;  // Σ (x − μ)⁴

  CentredSums& operator+=(const CentredSums& other) {
    squares += other.squares;
    fourths += other.fourths;
    return *this;
  }
};

double sum_of(std::span<const float> x) {
  return quant::reduce_in_chunks<double>(x.size(), [x](std::size_t begin, std::size_t end) {
    double sum = 0;
    for (std::size_t i = begin; i < end; ++i) sum += x[i];
    return sum;
  });
}

CentredSums centred_sums_of(std::span<const float> x, double mean) {
  return quant::reduce_in_chunks<CentredSums>(x.size(), [x, mean](std::size_t begin, std::size_t end) {
    CentredSums sums;
    for (std::size_t i = begin; i < end; ++i) {
      const double d = x[i] - mean;
      const double d2 = d * d;
      sums.squares += d2;
      sums.fourths += d2 * d2;
    }
    return sums;
  });
}

}  // namespace

Moments moments_of(std::span<const float> x) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  Moments m;
  m.count = x.size();
  const double sum = sum_of(x);
  // A double sum of floats cannot overflow (n · 2^128 stays far below 2^1024), so a non-finite sum
  // means a non-finite element, without a separate check of every element.
  if (x.empty() || !std::isfinite(sum)) {
    m.mean = m.variance = m.kurtosis = kNaN;
    return m;
  }
  const double n = static_cast<double>(x.size());
  m.mean = sum / n;
  const CentredSums sums = centred_sums_of(x, m.mean);
  m.variance = sums.squares / n;
  m.kurtosis = m.variance == 0 ? 0.0 : (sums.fourths / n) / (m.variance * m.variance);
  return m;
}

}  // namespace altgrad::diag
