#pragma once
// SWEEP_DIR/index.json (the layout shared with the report and the Slurm launcher,
// docs/experiments.md "The sweep directory"): the runs with their names, groups, seeds and
// settings, and the threshold searches with their brackets and probes. Written atomically.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sweep/expansion.hpp"
#include "sweep/lr_bisection.hpp"

namespace altgrad::sweep {

struct IndexedRun {
  const PlannedRun* run;
  std::optional<std::string> probe_of;  // the search group, for a threshold probe
};

struct SearchRecord {
  std::string group;
  std::int64_t seed = 0;  // the searched run's seed: a sweep with a seed axis searches each seed apart
  std::string key;
  std::vector<Probe> probes;
  std::vector<std::string> probe_runs;  // the run of each probe
  std::vector<std::string> reasons;     // each probe's stop reason
};

nlohmann::json index_json(const std::string& base_label, const std::vector<IndexedRun>& runs,
                          const std::vector<SearchRecord>& searches, const std::vector<Criterion>& criteria);

void write_index(const std::filesystem::path& sweep_dir, const nlohmann::json& index);

}  // namespace altgrad::sweep
