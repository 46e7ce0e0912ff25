#pragma once
// Statistics of one quantization call, gathered in the same pass that quantizes.
#include <cmath>
#include <cstdint>

namespace altgrad::quant {

// Whether a pass gathers the two error sums, sum_sq_error and sum_sq_input. Training gathers them on
// the steps that write a metrics line only (docs/quantization.md, "Which steps gather what"): they
// cost a conversion to double and two multiply-adds per value, about as much as the rounding.
// Skipped, both stay 0; every quantized bit and every other statistic is the same.
enum class ErrorSums : bool { skip = false, gather = true };

struct QuantStats {
  std::uint64_t count = 0;       // elements seen
  std::uint64_t overflow = 0;    // finite x whose |x·scale| rounded beyond max finite (before saturation)
  std::uint64_t underflow = 0;   // nonzero finite x that rounded below the smallest positive value
  std::uint64_t nan_inputs = 0;
  std::uint64_t inf_inputs = 0;
  std::uint64_t zero_inputs = 0;  // x = ±0; the outputs that are zero are zero_inputs + underflow
  float amax = 0.0f;             // max |x| over non-NaN inputs, before scaling (Inf included)
  double sum_sq_error = 0.0;     // Σ (x − dequantized)² over finite inputs; 0 under ErrorSums::skip
  double sum_sq_input = 0.0;     // Σ x² over finite inputs; 0 under ErrorSums::skip

  // ‖x − x̂‖ / ‖x‖ over finite inputs; 0 for an all-zero tensor, and for a pass that skipped the sums.
  double relative_error() const {
    return sum_sq_input > 0.0 ? std::sqrt(sum_sq_error / sum_sq_input) : 0.0;
  }
  double underflow_fraction() const { return count ? static_cast<double>(underflow) / count : 0.0; }

  void merge(const QuantStats& o) {
    count += o.count;
    overflow += o.overflow;
    underflow += o.underflow;
    nan_inputs += o.nan_inputs;
    inf_inputs += o.inf_inputs;
    zero_inputs += o.zero_inputs;
    amax = o.amax > amax ? o.amax : amax;
    sum_sq_error += o.sum_sq_error;
    sum_sq_input += o.sum_sq_input;
  }
};

}  // namespace altgrad::quant
