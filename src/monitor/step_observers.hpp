#pragma once
// The monitors of a training run, in the order they run within each stage of a step
// (step_observer.hpp). A new metric is a new observer in its own file and one line here.
#include <memory>
#include <vector>

#include "config/config.hpp"
#include "monitor/step_observer.hpp"

namespace altgrad::monitor {

std::vector<std::unique_ptr<StepObserver>> step_observers(const config::TrainConfig& config, std::size_t parameters);

}  // namespace altgrad::monitor
