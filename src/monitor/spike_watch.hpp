#pragma once
// The judgements over the run's recent losses and global gradient norms, every step after clipping:
// loss spikes and gradient-norm spikes (diag/spike_detectors.hpp) as warnings, and at each logged
// step the clipping keys of metrics.jsonl's "grad" (gradient_flow.hpp's add_clipping), whose rate
// is taken over the same recent norms. The norms and the last loss are checkpointed, so the
// detectors and the rate resume bit for bit.
#include <memory>

#include "config/config.hpp"
#include "monitor/step_observer.hpp"

namespace altgrad::monitor {

std::unique_ptr<StepObserver> spike_watch(const config::TrainConfig& config);

}  // namespace altgrad::monitor
