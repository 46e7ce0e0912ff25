#include "optim/optimizer.hpp"

#include <algorithm>
#include <stdexcept>

namespace altgrad::optim {

Optimizer::Optimizer(std::string_view who, std::size_t parameter_count, std::vector<ParameterRange> ranges)
    : parameter_count_(parameter_count), ranges_(std::move(ranges)) {
  check_ranges(who, parameter_count_, ranges_);
}

std::size_t Optimizer::add_state(std::string name) {
  state_.push_back({std::move(name), std::vector<float>(parameter_count_, 0.0f)});
  return state_.size() - 1;
}

void Optimizer::restore_state(std::string_view name, std::span<const float> values) {
  const auto found = std::find_if(state_.begin(), state_.end(), [&](const StateTensor& t) { return t.name == name; });
  if (found == state_.end()) {
    throw std::invalid_argument(std::string(this->name()) + " keeps no state tensor '" + std::string(name) + "'");
  }
  if (values.size() != found->values.size()) {
    throw std::invalid_argument(std::string(this->name()) + " state tensor '" + std::string(name) + "' has " +
                                std::to_string(found->values.size()) + " values, got " + std::to_string(values.size()));
  }
  std::copy(values.begin(), values.end(), found->values.begin());
}

std::size_t Optimizer::add_quantized_state(QuantizedState state) {
  quantized_.push_back(std::move(state));
  return quantized_.size() - 1;
}

void Optimizer::restore_quantized_state(std::string_view name, std::span<const std::uint8_t> codes,
                                        std::span<const float> scales) {
  const auto found =
      std::find_if(quantized_.begin(), quantized_.end(), [&](const QuantizedState& t) { return t.name() == name; });
  if (found == quantized_.end()) {
    throw std::invalid_argument(std::string(this->name()) + " keeps no quantized state tensor '" + std::string(name) + "'");
  }
  found->restore(codes, scales);
}

void Optimizer::restore_step_count(std::int64_t step) {
  if (step < 0) throw std::invalid_argument(std::string(name()) + ": negative step count " + std::to_string(step));
  step_ = step;
}

void Optimizer::check_step_sizes(std::string_view who, std::size_t params, std::size_t grads) const {
  if (params != parameter_count_ || grads != parameter_count_) {
    throw std::invalid_argument(std::string(who) + "::step: expected " + std::to_string(parameter_count_) +
                                " parameters and gradients, got " + std::to_string(params) + " and " +
                                std::to_string(grads));
  }
}

}  // namespace altgrad::optim
