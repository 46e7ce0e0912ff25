#pragma once
// What `altgrad report DIR` reads: a sweep directory (index.json as docs/experiments.md describes it,
// format "altgrad-sweep/1") or a single run directory, as one list of runs with their groups.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace altgrad::report {

struct RunEntry {
  std::string name;
  std::filesystem::path dir;  // absolute, or relative to the working directory
  std::string group;          // runs of one group differ only in seed
  std::int64_t seed = 0;
  nlohmann::json settings = nlohmann::json::object();  // keys set on top of the base config
};

struct Probe {
  double value = 0.0;
  std::string run;
  bool diverged = false;
  std::string reason;
};

// A stability-threshold search: the largest stable and smallest diverged value found so far.
struct Search {
  std::string kind;
  std::string group;
  std::optional<std::int64_t> seed;  // the searched run's seed; absent in indexes written before seeds were searched apart
  std::string key;
  std::optional<std::pair<double, double>> bracket;
  std::vector<Probe> probes;
};

// A success criterion of the sweep file (docs/experiments.md, "Verdicts").
struct Criterion {
  std::string baseline;
  double max_gap_pct = 0;
  std::int64_t min_seeds = 3;
  std::int64_t min_steps = 0;
  std::vector<std::string> groups;  // the groups it judges; empty: every group but the baseline
};

struct SweepIndex {
  bool single_run = false;
  std::string base;
  std::vector<RunEntry> runs;
  std::vector<Search> searches;
  std::vector<Criterion> criteria;
};

// Reads DIR/index.json, or treats DIR as one run when it has metrics.jsonl or config.toml.
// Throws ReportError naming the file and key for anything else.
SweepIndex load_sweep_index(const std::filesystem::path& dir);

}  // namespace altgrad::report
