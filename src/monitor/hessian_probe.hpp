#pragma once
// The top Hessian eigenvalue of the unquantized loss every hessian_interval steps (docs/optimizers.md,
// "Top Hessian eigenvalue"), as metrics.jsonl's diag.hessian: top_eigenvalue, residual, iterations.
// It is measured at the weights before the step's update, on that step's batch, before the step's
// clock starts. The weights come back bit for bit, and the start vector depends on the seed and the
// step only: the run's trajectory and the estimate are the same with or without it, on any thread
// count and across resume.
#include <cstddef>
#include <memory>

#include "config/config.hpp"
#include "monitor/step_observer.hpp"

namespace altgrad::monitor {

std::unique_ptr<StepObserver> hessian_probe(const config::TrainConfig& config, std::size_t parameters);

}  // namespace altgrad::monitor
