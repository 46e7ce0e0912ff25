#pragma once
// nanoGPT's learning-rate schedule: linear warmup over warmup_iters, cosine decay to min_lr at
// lr_decay_iters, then min_lr.
#include <cmath>
#include <numbers>

namespace altgrad::optim {

struct CosineSchedule {
  double learning_rate = 1e-3;
  double min_lr = 1e-4;
  int warmup_iters = 100;
  int lr_decay_iters = 5000;

  double at(int iteration) const {
    if (iteration < warmup_iters) return learning_rate * (iteration + 1) / (warmup_iters + 1);
    if (iteration > lr_decay_iters) return min_lr;
    const double span = lr_decay_iters - warmup_iters;
    const double ratio = span > 0 ? (iteration - warmup_iters) / span : 1.0;
    const double coefficient = 0.5 * (1.0 + std::cos(std::numbers::pi * ratio));
    return min_lr + coefficient * (learning_rate - min_lr);
  }
};

}  // namespace altgrad::optim
