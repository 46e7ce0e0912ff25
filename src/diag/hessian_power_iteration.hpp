#pragma once
// The loss Hessian's eigenvalue of largest magnitude, by power iteration on finite-difference
// Hessian-vector products (docs/optimizers.md, "Top Hessian eigenvalue"):
//
//   Hv ≈ (∇L(w + εv) − ∇L(w − εv)) / (2ε),   v ← Hv / ‖Hv‖
//
// over every element of one parameter buffer. The estimator perturbs the buffer in place, asks the
// caller for the gradient there, and puts the buffer back bit for bit, so a training run that
// measures the Hessian continues exactly as one that does not. Each iteration costs two gradient
// evaluations. The start vector is drawn from Philox at (key, stream), element i of the buffer
// reading word i; every reduction is chunked (quant/chunked_reduction.hpp): the same result on any
// thread count.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace altgrad::diag {

struct HessianEstimate {
  // The Rayleigh quotient vᵀHv / vᵀv at the last iterate, sign included: converges to the
  // eigenvalue of largest |λ| (positive at a minimum's neighbourhood, negative where the loss is
  // most sharply concave).
  double eigenvalue = 0.0;
  // ‖Hv − λv‖ / (|λ|·‖v‖) at the last iterate: 0 for an exact eigenvector; how far from
  // converged the estimate is (NaN when λ = 0).
  double residual = 0.0;
  int iterations = 0;  // iterations run (fewer than asked only when Hv vanished)
};

struct HessianOptions {
  double epsilon = 1e-3;  // ε: the step along the unit vector v, in parameter units
  int iterations = 20;    // power iterations, two gradient evaluations each
  std::uint64_t key = 0;     // Philox key of the start vector
  std::uint64_t stream = 0;  // Philox stream of the start vector (the training step)
};

// Writes ∇L at the buffer's current contents into its argument (same length as the buffer).
using GradientAt = std::function<void(std::span<float>)>;

class HessianPowerIteration {
 public:
  explicit HessianPowerIteration(std::size_t parameters);

  // Estimates at `params`, which hold w again (the same bits) when it returns. Throws
  // std::invalid_argument on a size mismatch, ε ≤ 0 or fewer than one iteration.
  HessianEstimate estimate(std::span<float> params, const GradientAt& gradient, const HessianOptions& options);

 private:
  void perturb(std::span<float> params, float sign_epsilon) const;

  std::vector<float> w_, v_, plus_, minus_;
};

}  // namespace altgrad::diag
