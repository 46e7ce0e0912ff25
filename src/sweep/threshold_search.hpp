#pragma once
// One run's learning-rate threshold search: the probes the bisection (lr_bisection.hpp) asks for,
// made one at a time, each a run of the searched run's config (its group's, at its seed) with the
// searched key at the probe's value (docs/experiments.md, "The threshold search").
#include <memory>
#include <vector>

#include "sweep/expansion.hpp"
#include "sweep/run_state.hpp"
#include "sweep/index_writer.hpp"
#include "sweep/sweep_spec.hpp"

namespace altgrad::sweep {

class ThresholdSearch {
 public:
  ThresholdSearch(const SweepSpec& spec, const PlannedRun& searched);

  // The next probe, named <run>.<label>-probe<N> (the searched run's name: its group and seed); null while one is running or when the search is over.
  const PlannedRun* next();

  // The state the last probe's run ended in. A run that did not end (it failed) ends the search.
  void finished(const RunState& state);

  bool ok() const { return !failed_; }
  const SearchRecord& record() const { return record_; }
  const std::vector<std::unique_ptr<PlannedRun>>& probes() const { return probes_; }

 private:
  PlannedRun probe(double value, std::size_t number) const;

  const SweepSpec& spec_;
  const PlannedRun& searched_;
  SearchRecord record_;
  std::vector<std::unique_ptr<PlannedRun>> probes_;
  double pending_value_ = 0;
  bool busy_ = false;
  bool failed_ = false;
};

}  // namespace altgrad::sweep
