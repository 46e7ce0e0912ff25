#include "optim/make_optimizer.hpp"

#include <stdexcept>
#include <string>

namespace altgrad::optim {

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, std::size_t parameter_count,
                                          std::vector<ParameterRange> ranges) {
  switch (spec.kind) {
    case OptimizerKind::adamw:
      return std::make_unique<AdamW>(parameter_count, spec.adamw, std::move(ranges), spec.moments);
    case OptimizerKind::sgd:
      return std::make_unique<Sgd>(parameter_count, spec.sgd, std::move(ranges));
    case OptimizerKind::stiffness_adamw:
      return std::make_unique<StiffnessAdamW>(parameter_count, spec.adamw, spec.bit_space, std::move(ranges));
    case OptimizerKind::gridwalk:
      return std::make_unique<GridWalk>(parameter_count, spec.adamw, spec.bit_space, std::move(ranges));
    case OptimizerKind::madam:
      return std::make_unique<Madam>(parameter_count, spec.adamw, spec.bit_space, std::move(ranges), false);
    case OptimizerKind::madam_int:
      return std::make_unique<Madam>(parameter_count, spec.adamw, spec.bit_space, std::move(ranges), true);
  }
  throw std::invalid_argument("make_optimizer: unknown optimizer kind " + std::to_string(static_cast<int>(spec.kind)));
}

}  // namespace altgrad::optim
