#include "sweep/threshold_search.hpp"

#include "sweep/lr_bisection.hpp"

namespace altgrad::sweep {

ThresholdSearch::ThresholdSearch(const SweepSpec& spec, const PlannedRun& searched) : spec_(spec), searched_(searched) {
  record_.group = searched.group;
  record_.seed = searched.config.seed;
  record_.key = spec.search->key;
}

const PlannedRun* ThresholdSearch::next() {
  if (busy_ || failed_) return nullptr;
  const auto value = next_probe({spec_.search->low, spec_.search->high, spec_.search->bisections}, record_.probes);
  if (!value) return nullptr;
  busy_ = true;
  pending_value_ = *value;
  probes_.push_back(std::make_unique<PlannedRun>(probe(*value, record_.probes.size() + 1)));
  return probes_.back().get();
}

void ThresholdSearch::finished(const RunState& state) {
  busy_ = false;
  if (!state.finished()) {
    failed_ = true;
    return;
  }
  record_.probes.push_back({pending_value_, state.diverged()});
  record_.probe_runs.push_back(probes_.back()->name);
  record_.reasons.push_back(state.stop_reason);
}

PlannedRun ThresholdSearch::probe(double value, std::size_t number) const {
  const std::string name = searched_.name + "." + key_label(spec_.search->key) + "-probe" + std::to_string(number);
  Settings settings = probe_settings(spec_, searched_.settings, value);
  return {name, name, settings, run_config(spec_.base, settings, name), {}};
}

}  // namespace altgrad::sweep
