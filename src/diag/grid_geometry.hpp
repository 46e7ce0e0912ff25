#pragma once
// The geometry of one optimizer step on one weight tensor's grid (docs/optimizers.md, "Geometry
// diagnostics"): how the update the optimizer wanted compares with the grid's spacing S(w), how
// many stored codes it changed and by how much, where the weights sit between grid points, and how
// much of the format they use. Codes are round-to-nearest-even codes of w on the step's grid
// (its format and scale before the step, per tensor or per MX block).
#include <array>
#include <cstdint>
#include <map>
#include <span>

#include "optim/weight_grid.hpp"

namespace altgrad::diag {

struct GridGeometry {
  std::uint64_t count = 0;
  double update_underflow = 0;  // fraction with |intended Δw| < S(w_before)/2 (lost to round-to-nearest)
  double update_success = 0;    // fraction whose code changed
  // Δcode = code index after − before, in bins ≤ −3, −2, −1, 0, 1, 2, ≥ 3 (index along the
  // ordered grid: ±0 is one point, so −min and +min positive values are two steps apart).
  std::array<std::uint64_t, 7> delta_code{};
  double delta_code_mean = 0;      // of Δcode itself, unbinned
  double delta_code_variance = 0;  // population variance of Δcode: the bit-space update variance
  // Pearson correlation of log2|g| with log2 S(w_before) over the elements with a finite nonzero
  // gradient; NaN when fewer than two or either is constant.
  double grad_stiffness_correlation = 0;
  double misalignment = 0;      // mean |w − q(w)| / S(w) after the step, in [0, 0.5]
  double capacity = 0;          // distinct grid values in use after the step / the format's finite values
  double alignment = 0;         // cos(applied Δw, −g); 0 when either is zero
  std::map<int, std::uint64_t> log2_stiffness;  // counts of floor(log2 S(w_before))
  double stiffness_entropy = 0;                  // Shannon entropy of that histogram, in bits
};

// `before` and `after` are the tensor's weights around the step, `intended` the update the
// optimizer wanted before any rounding (equal to after − before for optimizers that do not round),
// `grad` the gradient it was given; all the same size. Sequential: the same numbers on any thread
// count.
GridGeometry grid_geometry(const optim::WeightGrid& grid, std::span<const float> before, std::span<const float> after,
                           std::span<const float> intended, std::span<const float> grad);

}  // namespace altgrad::diag
