#pragma once
// The effective grid of a scaled quantization point: the values it can produce, decode(c) / scale
// for every code c (x_q = Q(x · scale), x̂ = x_q / scale; DESIGN.md "Scaling"). Its spacing at w is
// the "stiffness" S(w) of the bit-space optimizers (docs/optimizers.md).
#include "format/grid.hpp"
#include "format/host_device.hpp"
#include "format/spec.hpp"

namespace altgrad::format {

// S(w) = spacing(w · scale) / scale: the step from w's grid point to the next one away from zero,
// in units of w. At the edges it inherits spacing()'s meaning: the subnormal step (constant) below
// min normal / scale, the step away from zero at a power of two and the lower binade's step just
// below one, the top binade's step at and above max finite / scale; NaN for NaN and Inf.
//
// w · scale is rounded to FP32 first, as the quantizer rounds it, so a weight stored as the FP32
// nearest to a grid point gets that point's step. With a power-of-two scale (MX blocks, or 1)
// everything is exact. With any other scale the quotient is rounded once, and a weight one FP32
// rounding below a grid point at a power of two can still read as lying in the binade below
// (half the step); tests/format/effective_grid_test.cpp counts where.
ALTGRAD_HD inline float scaled_spacing(const Format& f, float w, float scale) {
  return spacing(f, w * scale) / scale;
}

}  // namespace altgrad::format
