#pragma once
// AdamW preconditioned by the grid's stiffness S(w)^p (p = 0, 1 or 2), either on the gradient before
// the moments (`precondition = "grad"`: g ← g·S^p) or on AdamW's final update
// (`precondition = "update"`: Δw ← Δw·S^p, decay left as AdamW applies it). S is taken at the
// weight before the step. p = 0 is plain AdamW with the bit-space optimizers' rate split (matmul
// weights at lr, the rest at adamw_learning_rate): the control the other optimizers' split needs,
// since AdamW itself takes one rate. State: AdamW's exp_avg, exp_avg_sq. docs/optimizers.md.
#include "optim/bit_space.hpp"

namespace altgrad::optim {

class StiffnessAdamW final : public BitSpaceOptimizer {
 public:
  static constexpr std::string_view kName = "stiffness_adamw";

  StiffnessAdamW(std::size_t parameter_count, const AdamWConfig& adamw, const BitSpaceConfig& config,
                 std::vector<ParameterRange> ranges);
  std::string_view name() const override { return kName; }

 private:
  void update_range(std::size_t index, const ParameterRange& range, std::span<const GridSpan> spans, float* p,
                    const float* g, const AdamScalars& s, std::int64_t step) override;
  std::vector<Hyperparameter> own_hyperparameters() const override;
};

}  // namespace altgrad::optim
