#pragma once
// From a sweep file to the runs it names: the product of its dimensions, each run's config built
// as base + the run's settings and checked by the trainer's own parser and recipe resolver before
// anything starts. Errors point at the sweep file (or base config) line that set the bad key.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "sweep/setting.hpp"
#include "sweep/sweep_spec.hpp"

namespace altgrad::sweep {

struct PlannedRun {
  std::string name;   // also its folder under runs/
  std::string group;  // the name without its seed part
  Settings settings;  // what the run sets on top of the base, in the order written
  config::TrainConfig config;
  // The run of this sweep it warm-starts from: `init_from = "@GROUP"` names the run of group GROUP
  // with this run's seed (docs/experiments.md, "Runs that start from other runs"). It starts
  // only once that run has ended. Empty when it starts fresh or from outside the sweep.
  std::string source;
};

// The run directory a run's init_from points at when its source is a run of the sweep.
std::filesystem::path source_dir(const std::filesystem::path& sweep_dir, const PlannedRun& run);

// Every run of the sweep's product, in order (the last dimension varies fastest). Throws
// SweepError on an invalid run config (naming the run, the line and the key) or a name collision.
// Without dimensions the sweep is one run, "base". With a [search] these are its groups.
std::vector<PlannedRun> expand(const SweepSpec& spec);

// The config of `base` with `settings` on top, parsed and validated as `altgrad train` would
// (config rules and the [quant] recipe). Throws SweepError prefixed by the origin of the key at
// fault and naming `run`.
config::TrainConfig run_config(const Settings& base, const Settings& settings, const std::string& run);

// A threshold probe's settings: the group's, then the searched key at `value`, max_iters = the
// search's steps and stop_loss_multiple = its loss_multiple (origin: the [search] table).
Settings probe_settings(const SweepSpec& spec, const Settings& group, double value);

// The settings as the JSON object index.json records: {"quant.preset": "fp8-hybrid", "seed": 1}.
nlohmann::json settings_json(const Settings& settings);

}  // namespace altgrad::sweep
