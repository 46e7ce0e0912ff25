#pragma once
// AdamW over one contiguous parameter buffer (Loshchilov & Hutter, "Decoupled Weight Decay
// Regularization"), in the order of operations of PyTorch's torch.optim.AdamW so a step matches it
// to rounding: decay, then moments, then the bias-corrected update.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "optim/moment_storage.hpp"
#include "optim/optimizer.hpp"
#include "optim/state_groups.hpp"

namespace altgrad::optim {

struct AdamWConfig {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

// State tensors `exp_avg` and `exp_avg_sq`, PyTorch's names; checkpoints of every version hold them
// under these names. Either may be kept as codes with per-group scales (`storage`, docs/optimizers.md
// "Low-precision optimizer state"): the step then decodes a group's moments, updates them and the
// parameters in FP32 exactly as with FP32 state, and only then rounds the new moments onto their
// format, so this step's update never sees its own rounding (FP8-LM's and torchao's order).
class AdamW final : public Optimizer {
 public:
  static constexpr std::string_view kName = "adamw";

  // Throws std::invalid_argument when a format name does not parse, exp_avg's format is unsigned,
  // or the group size is 0 or above kMaxStateGroup.
  AdamW(std::size_t parameter_count, const AdamWConfig& config, std::vector<ParameterRange> ranges,
        const MomentStorage& storage = {});

  std::string_view name() const override { return kName; }
  std::vector<Hyperparameter> hyperparameters() const override;
  void step(std::span<float> params, std::span<const float> grads, float lr) override;

 private:
  void step_quantized(std::span<float> params, std::span<const float> grads, float lr);

  AdamWConfig config_;
  MomentStorage storage_;
  std::optional<StateGroups> groups_;  // set when a moment is kept as codes
  // Indices of the state tensors: into state_values() for an FP32 moment, else quantized_values().
  std::size_t m_, v_;
};

// Scales grads so their global L2 norm is at most max_norm (torch.nn.utils.clip_grad_norm_, with its
// 1e-6 guard) and returns the norm before clipping. The norm is summed in double over fixed chunks
// merged in order, so it is the same for any thread count. max_norm <= 0 only measures.
double clip_grad_norm(std::span<float> grads, double max_norm);
// Whether clip_grad_norm scales a gradient of global norm `norm`: max_norm > 0 and
// max_norm / (norm + 1e-6) < 1, PyTorch's test.
bool clips(double norm, double max_norm);

}  // namespace altgrad::optim
