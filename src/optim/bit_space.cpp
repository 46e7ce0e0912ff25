#include "optim/bit_space.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "format/philox_key.hpp"

namespace altgrad::optim {

BitSpaceOptimizer::BitSpaceOptimizer(std::string_view who, std::size_t parameter_count, const AdamWConfig& adamw,
                                     const BitSpaceConfig& config, std::vector<ParameterRange> ranges)
    : Optimizer(who, parameter_count, std::move(ranges)),
      adamw_(adamw),
      config_(config),
      m_(add_state("exp_avg")),
      v_(add_state("exp_avg_sq")),
      rounding_key_(format::philox_key(config.seed, format::RandomPurpose::grid_walk_rounding)),
      grids_(this->ranges().size(), default_weight_grid()) {
  if (config.stiffness_power < 0 || config.stiffness_power > 2) {
    throw std::invalid_argument(std::string(who) + ": stiffness_power must be 0, 1 or 2, got " +
                                std::to_string(config.stiffness_power));
  }
  std::size_t largest = 0;
  for (std::size_t i = 0; i < grids_.size(); ++i) largest = std::max(largest, span_count(grids_[i], this->ranges()[i].size));
  spans_.resize(largest);
}

void BitSpaceOptimizer::set_grid(std::size_t range, const WeightGrid& grid) {
  if (range >= grids_.size()) throw std::invalid_argument(std::string(name()) + ": no parameter range " + std::to_string(range));
  const std::size_t count = span_count(grid, ranges()[range].size);  // checks the block shape
  if (count > spans_.size()) spans_.resize(count);                    // once, when grids are first set
  grids_[range] = grid;
}

std::vector<Hyperparameter> BitSpaceOptimizer::hyperparameters() const {
  std::vector<Hyperparameter> h = {{"beta1", adamw_.beta1}, {"beta2", adamw_.beta2}, {"eps", adamw_.eps},
                                   {"weight_decay", adamw_.weight_decay}, {"adamw_lr_ratio", config_.adamw_lr_ratio}};
  for (auto& own : own_hyperparameters()) h.push_back(std::move(own));
  return h;
}

float BitSpaceOptimizer::decay_factor(const ParameterRange& range, float lr) const {
  return range.decay ? static_cast<float>(1.0 - static_cast<double>(lr) * adamw_.weight_decay) : 1.0f;
}

void BitSpaceOptimizer::step(std::span<float> params, std::span<const float> grads, float lr) {
  check_step_sizes(name(), params.size(), grads.size());
  const std::int64_t step = advance_step();
  const AdamScalars s = adam_scalars(adamw_, lr, step);
  const AdamScalars adamw_part = adam_scalars(adamw_, adamw_rate(lr), step);
  for (std::size_t i = 0; i < ranges().size(); ++i) {
    const ParameterRange& range = ranges()[i];
    float* p = params.data() + range.offset;
    const float* g = grads.data() + range.offset;
    if (range.adamw_only) {
      adamw_range(range, p, g, adamw_part);
      continue;
    }
    const std::span<GridSpan> spans(spans_.data(), span_count(grids_[i], range.size));
    grid_spans(grids_[i], {p, range.size}, spans);
    update_range(i, range, spans, p, g, s, step);
  }
}

double BitSpaceOptimizer::adamw_rate(float lr) const { return lr * config_.adamw_lr_ratio; }  // lr at ratio 1

// AdamW exactly as optim/adamw.cpp computes it, on this optimizer's moments.
void BitSpaceOptimizer::adamw_range(const ParameterRange& range, float* p, const float* g, const AdamScalars& s) {
  const float decay = decay_factor(range, s.lr);
  float* m = exp_avg() + range.offset;
  float* v = exp_avg_sq() + range.offset;
#pragma omp parallel for simd schedule(static)
  for (std::size_t i = 0; i < range.size; ++i) {
    p[i] *= decay;
    p[i] += -s.step_size * adam_direction(g[i], m[i], v[i], s);
  }
}

}  // namespace altgrad::optim
