#pragma once
// Grid walk: AdamW's intended update, decoupled decay included,
//   Δw = −lr·wd·w − (lr / bc1)·m̂ / (√v̂ + eps)
// converted to grid steps Δk = Δw / S(w) and resolved to a whole number k by stochastic rounding
// (floor(Δk) + 1 with probability frac(Δk)); the FP32 master weight then moves k steps of S(w):
//   w ← w + k·S(w),   so E[w_new] = w + Δw
// (w ← w + Δw where |Δk| ≥ 2^23, which has no fraction to round and could overflow).
// The draws are Philox words keyed by philox_key(seed, grid_walk_rounding) at stream = step and
// index = the element's offset in the parameter buffer: the same bits for any thread count.
// State: AdamW's exp_avg, exp_avg_sq. docs/optimizers.md.
#include "optim/bit_space.hpp"

namespace altgrad::optim {

class GridWalk final : public BitSpaceOptimizer {
 public:
  static constexpr std::string_view kName = "gridwalk";

  GridWalk(std::size_t parameter_count, const AdamWConfig& adamw, const BitSpaceConfig& config,
           std::vector<ParameterRange> ranges);
  std::string_view name() const override { return kName; }
  bool rounds_updates() const override { return true; }

 private:
  void update_range(std::size_t index, const ParameterRange& range, std::span<const GridSpan> spans, float* p,
                    const float* g, const AdamScalars& s, std::int64_t step) override;
  std::vector<Hyperparameter> own_hyperparameters() const override { return {}; }
};

}  // namespace altgrad::optim
