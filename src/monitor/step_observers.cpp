#include "monitor/step_observers.hpp"

#include "monitor/gradient_flow.hpp"
#include "monitor/hadamard_metrics.hpp"
#include "monitor/hessian_probe.hpp"
#include "monitor/quant_metrics.hpp"
#include "monitor/spike_watch.hpp"
#include "monitor/step_diagnostics.hpp"
#include "monitor/step_geometry.hpp"

namespace altgrad::monitor {

std::vector<std::unique_ptr<StepObserver>> step_observers(const config::TrainConfig& config, std::size_t parameters) {
  std::vector<std::unique_ptr<StepObserver>> observers;
  if (config.hessian_interval > 0) observers.push_back(hessian_probe(config, parameters));
  observers.push_back(step_diagnostics_observer(config, parameters));
  observers.push_back(gradient_flow_observer());
  observers.push_back(quant_metrics_observer());
  observers.push_back(hadamard_metrics_observer());
  observers.push_back(spike_watch(config));
  observers.push_back(step_geometry_observer(config, parameters));
  return observers;
}

}  // namespace altgrad::monitor
