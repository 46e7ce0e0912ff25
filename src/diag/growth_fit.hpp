#pragma once
// Exponential growth of a positive quantity over a window of steps, as a least-squares line
// through log2 of its values: y_i = log2 v_i at x_i = i (one value per step, oldest first).
//   slope   binades per step (the quantity doubles every 1/slope steps when slope > 0)
//   r2      the coefficient of determination of that line, in [0, 1]: how much of the variation of
//           log2 v the trend explains (1 for a clean exponential, near 0 for noise around a level)
// Fewer than 3 values, or values all equal, give slope 0 and r2 0.
#include <span>

namespace altgrad::diag {

struct GrowthFit {
  double slope = 0;
  double r2 = 0;
};

GrowthFit log2_growth(std::span<const double> log2_values);

}  // namespace altgrad::diag
