#pragma once
// What a Hadamard transform did to one operand copy (docs/quantization.md, "Hadamard transforms"):
// its amax and kurtosis before and after the transform, and the quantization error of the
// transformed copy. Gathered on the steps that write a metrics line only, from extra passes over
// the copy (the quantizer's own statistics cannot tell the two sides of the transform apart).
#include <cstdint>
#include <span>

namespace altgrad::precision {

struct HadamardStats {
  std::uint64_t calls = 0;
  std::uint64_t count = 0;   // elements, over the calls
  float amax_before = 0.0f;  // max |x| over non-NaN values
  float amax_after = 0.0f;
  // Σ over calls of count · Pearson kurtosis (diag/moments.hpp): the step's kurtosis is their
  // count-weighted mean, one value per call's tensor (each micro-batch is a tensor of its own).
  double weighted_kurtosis_before = 0.0;
  double weighted_kurtosis_after = 0.0;
  // The transformed copy's ‖y − ŷ‖² and ‖y‖² over finite y; only where the point quantizes.
  bool quantized = false;
  double sum_sq_error = 0.0;
  double sum_sq_input = 0.0;

  double kurtosis_before() const;
  double kurtosis_after() const;
  // ‖y − ŷ‖ / ‖y‖; 0 for an all-zero copy.
  double relative_error() const;
  void merge(const HadamardStats& o);
};

// One call: `before` the operand, `after` its transform, `quantized` the copy the GEMM reads (empty
// where the point is off and the transform is the copy).
HadamardStats measure_hadamard(std::span<const float> before, std::span<const float> after,
                               std::span<const float> quantized);

}  // namespace altgrad::precision
