#pragma once
// Grid walk: AdamW's intended update, decoupled decay included,
//   Δw = −lr·wd·w − (lr / bc1)·m̂ / (√v̂ + eps)
// converted to grid steps Δk = Δw / S(w) and resolved to a whole number k by stochastic rounding
// (floor(Δk) + 1 with probability frac(Δk)); the FP32 master weight then moves k steps of S(w):
//   w ← w + k·S(w),   so E[w_new] = w + Δw
// (w ← w + Δw where |Δk| ≥ 2^23, which has no fraction to round and could overflow).
// The draws are Philox words keyed by philox_key(seed, grid_walk_rounding) at stream = step and
// index = the element's offset in the parameter buffer: the same bits for any thread count.
// With code-only weights (use_code_weights) a range kept as codes takes w + Δw stochastically
// rounded onto its grid instead (the same step inside w's binade; see move_codes), and its
// parameters are rewritten from the codes: they never leave the grid.
// State: AdamW's exp_avg, exp_avg_sq. docs/optimizers.md.
#include "optim/bit_space.hpp"
#include "optim/code_weights.hpp"

namespace altgrad::optim {

class GridWalk final : public BitSpaceOptimizer {
 public:
  static constexpr std::string_view kName = "gridwalk";

  GridWalk(std::size_t parameter_count, const AdamWConfig& adamw, const BitSpaceConfig& config,
           std::vector<ParameterRange> ranges);
  std::string_view name() const override { return kName; }
  bool rounds_updates() const override { return true; }
  // The ranges `codes` holds are updated as codes from now on; null: none (FP32 master weights).
  // Each such range's grid must be its codes' format under their scale, unscaled by blocks.
  void use_code_weights(CodeWeights* codes) { codes_ = codes; }

 private:
  void update_range(std::size_t index, const ParameterRange& range, std::span<const GridSpan> spans, float* p,
                    const float* g, const AdamScalars& s, std::int64_t step) override;
  std::vector<Hyperparameter> own_hyperparameters() const override { return {}; }
  // Overwrites `intended` (scratch).
  void move_codes(CodeTensor& t, std::size_t begin, std::size_t n, float* intended, const std::uint32_t* words,
                  float* w) const;

  CodeWeights* codes_ = nullptr;
};

}  // namespace altgrad::optim
