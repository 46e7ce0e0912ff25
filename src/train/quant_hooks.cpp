#include "train/quant_hooks.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace altgrad::train {

QuantHooks::QuantHooks(const model::MatmulPoints& points, const Recipe& recipe) {
  if (recipe.points.size() != points.operand_count()) {
    throw std::invalid_argument("QuantHooks: the recipe has " + std::to_string(recipe.points.size()) +
                                " points, the model " + std::to_string(points.operand_count()));
  }
  points_.resize(recipe.points.size());
  for (std::size_t i = 0; i < recipe.points.size(); ++i) {
    names_.push_back(recipe.points[i].name);
    if (recipe.points[i].settings.enabled) points_[i].emplace(recipe.points[i].settings, recipe.seed, i);
  }
}

void QuantHooks::begin_step(std::int64_t step, bool collect_codes) {
  step_ = step;
  first_non_finite_.reset();
  for (auto& point : points_) {
    if (!point) continue;
    point->begin_step(step);
    point->collect_codes(collect_codes);
  }
}

void QuantHooks::end_step() {
  for (auto& point : points_) {
    if (point) point->end_step();
  }
}

void QuantHooks::inject_nan(std::size_t index, std::int64_t step) {
  if (index >= points_.size()) throw std::invalid_argument("inject_nan: no point " + std::to_string(index));
  injection_.emplace(index, step);
}

bool QuantHooks::injecting(std::size_t index) const {
  return !frozen_ && injection_ && injection_->first == index && injection_->second == step_;
}

bool QuantHooks::active(const model::MatmulOperand& operand) {
  return points_[operand.index].has_value() || injecting(operand.index);
}

bool QuantHooks::axis_dependent(const model::MatmulOperand& operand) {
  const auto& point = points_[operand.index];
  return point && point->settings().scaling == quant::Scaling::block;
}

void QuantHooks::apply(const model::MatmulOperand& operand, std::span<const float> in, std::span<float> out) {
  std::uint64_t non_finite = 0;
  if (auto& point = points_[operand.index]) {
    const quant::OperandLayout layout{operand.cols, operand.reduction == model::Reduction::along_rows, operand.run,
                                       operand.causal};
    const quant::PointStats call = point->apply(in, out, layout, frozen_);
    non_finite = call.values.nan_inputs + call.values.inf_inputs;
  } else {
    std::copy(in.begin(), in.end(), out.begin());
  }
  const bool injected = injecting(operand.index) && !out.empty();
  if (injected) out[0] = std::numeric_limits<float>::quiet_NaN();
  if ((non_finite > 0 || injected) && !first_non_finite_ && !frozen_) {
    first_non_finite_ = NonFinitePoint{names_[operand.index], non_finite + (injected ? 1 : 0), injected};
  }
}

}  // namespace altgrad::train
