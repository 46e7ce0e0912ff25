#pragma once
// The low-precision gradient reduction (grad_reduce_format; docs/optimizers.md, "Low-precision
// gradient reduction"): MS-AMP's FP8 all-reduce (msamp/nn/distributed.py, _reduce_bucket), with
// the M micro-batches of one step in the place of its M data-parallel ranks. Per parameter tensor,
// with g_m micro-batch m's gradient (FP32, the gradient of that micro-batch's mean loss), round()
// the format's rounding to nearest even (saturating at ±max finite, unless the name asks for
// overflow=inf), and fl() FP32's:
//
//   A   = max over m and i of |g_m[i]|                  NaN counts as +Inf
//   s   = 2^k · fl(1 / fl(√M)),  k = floor(log2(max_finite / A)), at most 127
//         (A = 0 or not finite: the tensor's previous s, 1 at first, as MS-AMP keeps its scale)
//   q_m = round(fl(g_m · s))
//   P_1 = q_1;  P_m = round(fl(P_{m−1} + q_m))          sum = "format": partial sums in the format
//               P_m = fl(P_{m−1} + q_m)                 sum = "fp32"
//   ĝ   = fl(P_M / fl(s · M))                           the average the optimizer sees
//
// in micro-batch order m = 1..M, element by element. Where some g_m[i] is NaN or ±Inf, ĝ[i] is
// NaN in every format (E4M3 gives that anyway; a format without NaN would give ±max finite), so a
// non-finite gradient stops the run at clipping as in FP32. No bit of ĝ that the run keeps depends
// on the previous s: with A = 0 every q_m is ±0 at any scale, and a non-finite A stops the run.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "config/config.hpp"
#include "format/spec.hpp"
#include "model/parameter_layout.hpp"

namespace altgrad::train {

// What one reduction's roundings did: the M·N quantizations and, with sum = "format", the
// (M−1)·N roundings of partial sums (N elements).
struct ReductionStats {
  std::uint64_t roundings = 0;
  std::uint64_t overflow = 0;   // finite values that rounded beyond max finite (then saturated)
  std::uint64_t underflow = 0;  // nonzero finite values that rounded to zero
};

class GradientReduction {
 public:
  // Over a buffer of `size` elements holding the tensors at `tensors` (disjoint; empty ones are
  // skipped), for steps of `micro_batches` micro-batches. `f` must be signed.
  GradientReduction(const format::Format& f, config::GradReduceSum sum, std::vector<model::Slot> tensors,
                    std::size_t size, int micro_batches);

  int micro_batches() const { return micro_batches_; }

  // Where micro-batch m (0-based) puts its gradient, a buffer of `size` elements; reduce() reads
  // and overwrites it.
  std::span<float> micro_batch(int m);

  // ĝ of the micro-batch gradients into `out` (`size` elements; elements outside every tensor
  // are left as they are).
  ReductionStats reduce(std::span<float> out);

  // Each tensor's s of the latest reduce(), in the order of `tensors`; 1 before the first.
  std::span<const float> scales() const { return scales_; }

 private:
  format::Format format_;
  config::GradReduceSum sum_;
  std::vector<model::Slot> tensors_;
  std::size_t size_;
  int micro_batches_;
  std::vector<float> buffers_;  // micro-batch m's gradient at [m·size, (m+1)·size)
  std::vector<float> scales_;
};

// The reduction a run's config asks for over its model's tensors, or none (grad_reduce_format = "").
std::optional<GradientReduction> make_gradient_reduction(const config::TrainConfig& c,
                                                         const model::ParameterLayout& layout);

}  // namespace altgrad::train
