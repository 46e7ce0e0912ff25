#pragma once
// Madam, multiplicative updates (Bernstein, Zhao, Meister, Liu, Anandkumar, Yue, "Learning
// compositional functions via multiplicative weight updates", NeurIPS 2020), with the constants of
// the authors' reference implementation (github.com/jxbz/madam, pytorch/optim/madam.py). Per
// parameter, at step t (from 1), with β = madam_beta (0.999):
//   v ← β·v + (1 − β)·g²                          (state exp_avg_sq, from 0)
//   ĝ ← g / √(v / (1 − β^t)),  0 where that is 0/0,  clamped to [−g_bound, g_bound]   (g_bound 10)
//   w ← w·exp(−lr·ĝ·sign(w)),  then clamped to [−B, B]
// where B = p_scale·RMS(w) of the tensor at its first step (p_scale 3), kept in the state tensor
// `weight_bound`. Signs never change and zero stays zero. Madam has no weight decay.
//
// madam_int moves weights by whole powers of two instead, natural on a power-of-two grid (E7M0)
// where one factor of 2 is one code: the exponent step Δe = −lr·ĝ·sign(w)/ln 2 (the same
// multiplicative step, measured in octaves) is resolved by stochastic rounding to a whole k, and
// w ← w·2^k (exact), then clamped to [−B, B]; E[log2|w_new|] = log2|w| + Δe away from the bound.
// Draws: Philox keyed by philox_key(seed, grid_walk_rounding), stream = step, index = the
// element's offset in the parameter buffer.
#include "optim/bit_space.hpp"

namespace altgrad::optim {

class Madam final : public BitSpaceOptimizer {
 public:
  static constexpr std::string_view kName = "madam";
  static constexpr std::string_view kIntegerName = "madam_int";

  // integer_exponents: madam_int.
  Madam(std::size_t parameter_count, const AdamWConfig& adamw, const BitSpaceConfig& config,
        std::vector<ParameterRange> ranges, bool integer_exponents);
  std::string_view name() const override { return integer_ ? kIntegerName : kName; }
  bool rounds_updates() const override { return integer_; }

 private:
  void update_range(std::size_t index, const ParameterRange& range, std::span<const GridSpan> spans, float* p,
                    const float* g, const AdamScalars& s, std::int64_t step) override;
  std::vector<Hyperparameter> own_hyperparameters() const override;

  bool integer_;
  std::size_t bound_;  // index of the weight_bound state tensor
};

}  // namespace altgrad::optim
