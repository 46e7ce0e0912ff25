#pragma once
// Moments of a tensor's values, for the residual stream after each block and each matmul input.
//
// For x of n elements, all in double:
//   mean      μ  = (1/n) Σ x_i
//   variance  σ² = (1/n) Σ (x_i − μ)²                 (population variance, divisor n)
//   kurtosis  κ  = ((1/n) Σ (x_i − μ)⁴) / σ⁴          (Pearson's, not excess: a normal has κ = 3)
// Kurtosis measures how much of the variance sits in rare, large outliers; a value above 10 is a
// warning that a few features dominate, which low-precision formats clip or flush.
//
// Special cases: σ = 0 (all values equal) gives κ = 0. Any NaN or ±Inf element makes mean,
// variance and kurtosis NaN. An empty span gives NaN for all three and count 0.
//
// Two passes (the mean, then the centred sums), so the variance does not lose digits to cancellation
// as E[x²] − μ² would. Deterministic: the sums are reduced in fixed chunks (quant/chunked_reduction.hpp).
#include <cstdint>
#include <span>

namespace altgrad::diag {

struct Moments {
  double mean = 0;
  double variance = 0;
  double kurtosis = 0;
  std::uint64_t count = 0;
};

Moments moments_of(std::span<const float> x);

}  // namespace altgrad::diag
