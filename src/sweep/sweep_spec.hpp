#pragma once
// A sweep file (docs/experiments.md, "The sweep file"), read and checked key by key:
//
//   base = "tiny.toml"             # a config file, relative to the sweep file; or a [base] table
//   [set]                          # config keys on top of the base for every run (not in names)
//   [recipes.e3m4]                 # named bundles of config keys (tables nest: [recipes.e3m4.quant.act])
//   [[runs]]                       # an explicit list of runs: config keys, `recipe`, optional `name`
//   [axes]                         # key = [values]: the full product; `recipe` = [recipe names]
//   [search]                       # kind = "lr_threshold": a bisection per group and seed (lr_bisection.hpp)
//   [criteria] or [[criteria]]     # success criteria the report gives every group a verdict on
//
// The runs are the product of the dimensions: the listed runs (if any), then each axis in order.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sweep/run_name.hpp"
#include "sweep/setting.hpp"

namespace altgrad::sweep {

// One value of one dimension: what it sets and how it is named.
struct Choice {
  std::vector<NamePart> parts;
  Settings settings;
};

struct SearchSpec {
  std::string key = "learning_rate";  // a number key, searched on a log10 scale
  double low = 0, high = 0;           // the first two probes; 0 < low < high
  int bisections = 4;                 // probes after the two ends
  std::int64_t steps = 0;             // K: each probe's max_iters
  double loss_multiple = 4.0;         // each probe's stop_loss_multiple
  std::string origin;                 // the [search] table's line
};

// "Within max_gap_pct of the baseline group's final val loss", judged by the report per group over
// at least min_seeds paired seeds of at least min_steps steps (docs/experiments.md, "Verdicts").
struct Criterion {
  std::string baseline;  // a group of this sweep
  double max_gap_pct = 0;
  std::int64_t min_seeds = 3;
  std::int64_t min_steps = 0;
  std::vector<std::string> groups;  // the groups it judges; empty: every group but the baseline
  std::string origin;  // the table's line
};

struct SweepSpec {
  std::filesystem::path file;
  std::string text;        // the file as read, copied to SWEEP_DIR/sweep.toml
  std::string base_label;  // the base path as written, or "inline"
  Settings base;  // the base config's keys, then [set]'s
  std::vector<std::vector<Choice>> dimensions;
  std::optional<SearchSpec> search;
  std::vector<Criterion> criteria;
};

// Throws SweepError naming the file, line, key and value of the first problem.
SweepSpec load_sweep(const std::filesystem::path& file);
SweepSpec parse_sweep(std::string text, const std::filesystem::path& file);

}  // namespace altgrad::sweep
