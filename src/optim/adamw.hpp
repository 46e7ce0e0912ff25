#pragma once
// AdamW over one contiguous parameter buffer (Loshchilov & Hutter, "Decoupled Weight Decay
// Regularization"), in the order of operations of PyTorch's torch.optim.AdamW so a step matches it
// to rounding: decay, then moments, then the bias-corrected update.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "optim/optimizer.hpp"

namespace altgrad::optim {

struct AdamWConfig {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

// State tensors `exp_avg` and `exp_avg_sq`, PyTorch's names; checkpoints of every version hold them
// under these names.
class AdamW final : public Optimizer {
 public:
  static constexpr std::string_view kName = "adamw";

  AdamW(std::size_t parameter_count, const AdamWConfig& config, std::vector<ParameterRange> ranges);

  std::string_view name() const override { return kName; }
  std::vector<Hyperparameter> hyperparameters() const override;
  void step(std::span<float> params, std::span<const float> grads, float lr) override;

 private:
  AdamWConfig config_;
  std::size_t m_, v_;  // indices of the state tensors
};

// Scales grads so their global L2 norm is at most max_norm (torch.nn.utils.clip_grad_norm_, with its
// 1e-6 guard) and returns the norm before clipping. The norm is summed in double over fixed chunks
// merged in order, so it is the same for any thread count. max_norm <= 0 only measures.
double clip_grad_norm(std::span<float> grads, double max_norm);
// Whether clip_grad_norm scales a gradient of global norm `norm`: max_norm > 0 and
// max_norm / (norm + 1e-6) < 1, PyTorch's test.
bool clips(double norm, double max_norm);

}  // namespace altgrad::optim
