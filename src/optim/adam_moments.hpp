#pragma once
// Adam's moment arithmetic, one definition for every optimizer that moves along Adam's direction:
// AdamW itself, stiffness_adamw, gridwalk and the AdamW part of the bit-space optimizers. It
// follows PyTorch's AdamW (torch.optim.AdamW, single-tensor form) operation by operation, so that
// each of them matches PyTorch's bits where it reduces to AdamW.
#include <cmath>
#include <cstdint>

#include "optim/adamw.hpp"

namespace altgrad::optim {

// The scalars of one step, computed once per step in double as PyTorch does and applied as floats.
struct AdamScalars {
  float lr, beta1, beta2, eps;
  float step_size;              // lr / (1 − β1^t)
  float bias_correction2_sqrt;  // √(1 − β2^t)
};

inline AdamScalars adam_scalars(const AdamWConfig& config, double lr, std::int64_t step) {
  const double bias_correction1 = 1.0 - std::pow(static_cast<double>(config.beta1), static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(static_cast<double>(config.beta2), static_cast<double>(step));
  return {static_cast<float>(lr),
          config.beta1,
          config.beta2,
          config.eps,
          static_cast<float>(lr / bias_correction1),
          static_cast<float>(std::sqrt(bias_correction2))};
}

// Moves one element's moments toward its gradient g and returns m / (√v / √(1 − β2^t) + ε): the
// update is −step_size times it.
inline float adam_direction(float g, float& m, float& v, const AdamScalars& s) {
  m += (1.0f - s.beta1) * (g - m);  // lerp toward g, PyTorch's form for weights < 0.5
  v = v * s.beta2 + (1.0f - s.beta2) * g * g;
  const float denom = std::sqrt(v) / s.bias_correction2_sqrt + s.eps;
  return m / denom;
}

}  // namespace altgrad::optim
