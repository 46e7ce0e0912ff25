#pragma once
// AdamW over one contiguous parameter buffer (Loshchilov & Hutter, "Decoupled Weight Decay
// Regularization"), in the order of operations of PyTorch's torch.optim.AdamW so a step matches it
// to rounding: decay, then moments, then the bias-corrected update.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace altgrad::optim {

struct AdamWConfig {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

// A run of parameters with one decay rule. nanoGPT decays tensors of 2 or more dimensions
// (embeddings and Linear weights) and not biases or norm weights.
struct ParameterRange {
  std::size_t offset = 0;
  std::size_t size = 0;
  bool decay = true;
};

class AdamW {
 public:
  AdamW(std::size_t parameter_count, const AdamWConfig& config, std::vector<ParameterRange> ranges);

  // One update with learning rate `lr`; increments the step count first, as PyTorch does.
  void step(std::span<float> params, std::span<const float> grads, float lr);

  std::int64_t step_count() const { return step_; }
  std::span<const float> first_moment() const { return m_; }
  std::span<const float> second_moment() const { return v_; }
  // Restores moments and step count saved from the accessors above (checkpoint resume).
  void restore(std::span<const float> m, std::span<const float> v, std::int64_t step);

 private:
  AdamWConfig config_;
  std::vector<ParameterRange> ranges_;
  std::vector<float> m_, v_;
  std::int64_t step_ = 0;
};

// Scales grads so their global L2 norm is at most max_norm (torch.nn.utils.clip_grad_norm_, with its
// 1e-6 guard) and returns the norm before clipping. The norm is summed in double over fixed chunks
// merged in order, so it is the same for any thread count. max_norm <= 0 only measures.
double clip_grad_norm(std::span<float> grads, double max_norm);

}  // namespace altgrad::optim
