#pragma once
// Dead MLP hidden units: units whose nonlinearity is stuck in its flat negative tail for a whole
// batch, so that they neither pass a signal forward nor receive a gradient through it.
//
// Definition. Unit j is dead on a batch of N ≥ 1 tokens when, for every token n, its nonlinearity φ
// at the unit's pre-activation z = z[n, j] satisfies
//     |φ(z)| < 0.01   and   |φ'(z)| < 0.01.
//   GELU   (model::Mlp::gelu):   φ(z) = z·Φ(z) (exact GELU, Φ the standard normal CDF), and
//          z is the c_fc output fc (N, H) itself.
//   SwiGLU (model::Mlp::swiglu): φ(z) = z·σ(z) (SiLU, σ the logistic function), and z is the gate:
//          fc (N, 2H) holds rows [gate (H) | value (H)] (ops/cpu/swiglu.hpp), and the value half is
//          not read. A dead gate zeroes silu(gate)·value and its gradient whatever the value is.
// Both conditions together hold exactly on a half-line z < z*: z* ≈ −3.0674 for GELU (set by
// |φ'| = 0.01) and z* ≈ −6.4709 for SiLU (set by |φ| = 0.01). Near z = 0 |φ| is small too, but
// there φ' ≈ 1/2. z = −∞ counts as in the tail (both limits are 0); NaN and +∞ do not.
//
// fraction = dead / H, in [0, 1]; 0 when H = 0. With N = 0 no unit is dead (there is no evidence).
// Deterministic for any thread count: the result is a count of per-unit verdicts.
#include <cstddef>
#include <span>

namespace altgrad::diag {

inline constexpr double kFlatTailBound = 0.01;  // the bound on |φ| and |φ'| above

struct DeadUnits {
  std::size_t dead = 0;   // units in the flat tail for every token
  std::size_t units = 0;  // H
  double fraction = 0;    // dead / units
};

// fc (N, H): GELU pre-activations.
DeadUnits dead_units_gelu(std::span<const float> fc, std::size_t N, std::size_t H);

// fc (N, 2H): SwiGLU rows [gate | value]; only the gate is read.
DeadUnits dead_units_swiglu(std::span<const float> fc, std::size_t N, std::size_t H);

// Whether z lies in the flat tail of GELU / SiLU (the per-token condition above).
bool in_gelu_flat_tail(double z);
bool in_silu_flat_tail(double z);

}  // namespace altgrad::diag
