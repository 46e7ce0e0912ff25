#include "precision/hadamard_stats.hpp"

#include <cmath>
#include <limits>

#include "diag/moments.hpp"
#include "quant/chunked_reduction.hpp"

namespace altgrad::precision {
namespace {

struct CopyAmax {
  float value = 0.0f;
  CopyAmax& operator+=(const CopyAmax& o) {
    value = o.value > value ? o.value : value;
    return *this;
  }
};

float copy_amax(std::span<const float> x) {
  return quant::reduce_in_chunks<CopyAmax>(x.size(), [x](std::size_t begin, std::size_t end) {
           CopyAmax a;
           for (std::size_t i = begin; i < end; ++i) {
             const float magnitude = std::fabs(x[i]);
             a.value = magnitude > a.value ? magnitude : a.value;  // a NaN compares false: skipped, as fmax skips it
           }
           return a;
         }).value;
}

struct CopyErrorSums {
  double error = 0.0, input = 0.0;
  CopyErrorSums& operator+=(const CopyErrorSums& o) {
    error += o.error;
    input += o.input;
    return *this;
  }
};

CopyErrorSums copy_error_sums(std::span<const float> exact, std::span<const float> quantized) {
  return quant::reduce_in_chunks<CopyErrorSums>(exact.size(), [exact, quantized](std::size_t begin, std::size_t end) {
    CopyErrorSums sums;
    for (std::size_t i = begin; i < end; ++i) {
      if (!std::isfinite(exact[i])) continue;
      const double y = exact[i], d = y - static_cast<double>(quantized[i]);
      sums.error += d * d;
      sums.input += y * y;
    }
    return sums;
  });
}

}  // namespace

double HadamardStats::kurtosis_before() const {
  return count ? weighted_kurtosis_before / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
}

double HadamardStats::kurtosis_after() const {
  return count ? weighted_kurtosis_after / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
}

double HadamardStats::relative_error() const { return sum_sq_input > 0.0 ? std::sqrt(sum_sq_error / sum_sq_input) : 0.0; }

void HadamardStats::merge(const HadamardStats& o) {
  calls += o.calls;
  count += o.count;
  amax_before = std::fmax(amax_before, o.amax_before);
  amax_after = std::fmax(amax_after, o.amax_after);
  weighted_kurtosis_before += o.weighted_kurtosis_before;
  weighted_kurtosis_after += o.weighted_kurtosis_after;
  quantized = quantized || o.quantized;
  sum_sq_error += o.sum_sq_error;
  sum_sq_input += o.sum_sq_input;
}

HadamardStats measure_hadamard(std::span<const float> before, std::span<const float> after,
                               std::span<const float> quantized) {
  HadamardStats s;
  s.calls = 1;
  s.count = before.size();
  s.amax_before = copy_amax(before);
  s.amax_after = copy_amax(after);
  const double n = static_cast<double>(before.size());
  s.weighted_kurtosis_before = n * diag::moments_of(before).kurtosis;
  s.weighted_kurtosis_after = n * diag::moments_of(after).kurtosis;
  if (!quantized.empty()) {
    const CopyErrorSums sums = copy_error_sums(after, quantized);
    s.quantized = true;
    s.sum_sq_error = sums.error;
    s.sum_sq_input = sums.input;
  }
  return s;
}

}  // namespace altgrad::precision
