#pragma once
// Stochastic gradient descent with momentum, in the order of operations of PyTorch's
// torch.optim.SGD (dampening 0) so a step matches it to rounding:
//   g ← g + weight_decay·p                  (L2 decay added to the gradient, on decaying ranges)
//   b ← g at the first step, else momentum·b + g
//   d ← g + momentum·b if nesterov, else b  (d = g when momentum = 0)
//   p ← p − lr·d
// Unlike AdamW's decoupled decay (p ← p·(1 − lr·wd)), this decay passes through the momentum.
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "optim/optimizer.hpp"

namespace altgrad::optim {

struct SgdConfig {
  float momentum = 0.9f;
  bool nesterov = false;  // needs momentum > 0, as in PyTorch
  float weight_decay = 0.0f;
};

// State tensor `momentum_buffer` (PyTorch's name) when momentum > 0; none otherwise.
class Sgd final : public Optimizer {
 public:
  static constexpr std::string_view kName = "sgd";

  Sgd(std::size_t parameter_count, const SgdConfig& config, std::vector<ParameterRange> ranges);

  std::string_view name() const override { return kName; }
  std::vector<Hyperparameter> hyperparameters() const override;
  void step(std::span<float> params, std::span<const float> grads, float lr) override;

 private:
  void plain_step(std::span<float> params, std::span<const float> grads, float lr) const;
  void momentum_step(std::span<float> params, std::span<const float> grads, float lr, bool first);

  SgdConfig config_;
  std::size_t buffer_ = 0;  // index of the momentum buffer, when momentum > 0
};

}  // namespace altgrad::optim
