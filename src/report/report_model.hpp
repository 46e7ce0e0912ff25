#pragma once
// Everything a report shows, computed once from the directories: the runs, their groups, each
// group's final validation loss, its gaps to the bf16 and fp32 baselines and to the baseline its
// row compares with, its warnings, and the verdicts on the sweep's criteria.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/comparison.hpp"
#include "report/run_data.hpp"
#include "report/statistics.hpp"
#include "report/index_reader.hpp"
#include "report/verdict.hpp"
#include "report/warning_count.hpp"

namespace altgrad::report {

struct GroupSummary {
  std::string name;               // index.json's group: as the sweep file names the recipe
  std::vector<std::size_t> runs;  // indices into Report::runs
  std::string preset;             // the runs' base quant.preset ("mixed" when they differ)
  bool preset_only = true;        // every run is its preset as it stands (RunData::preset_only)
  int diverged = 0;
  // Final val loss over the group's runs that did not diverge and logged one: its mean over seeds
  // with a 95% interval, and its range.
  MeanEstimate val_loss;
  std::vector<double> val_losses;  // those final values, in run order
  std::optional<double> val_loss_min, val_loss_max;
  std::optional<std::string> bf16_baseline, fp32_baseline;  // the baseline groups' names
  std::optional<double> gap_bf16_pct, gap_fp32_pct;         // between the two groups' mean val losses
  PairedGap paired_bf16, paired_fp32;                       // seed by seed (statistics.hpp)
  std::optional<Comparison> comparison;                     // the group table's baseline and gaps
  WarningCount warnings;

  // The cost of the result over the runs that reported one: how many reached target_loss, the
  // mean tokens and seconds to it over those that did, the largest peak memory, the mean
  // checkpoint size.
  int cost_runs = 0, reached = 0;
  std::optional<double> tokens_to_target, seconds_to_target, peak_rss_mib, checkpoint_mib;

  std::optional<double> val_loss_mean() const { return val_loss.n ? std::optional(val_loss.mean) : std::nullopt; }
};

// How the sweep's correction (verdict_correction.hpp) decided a verdict that an interval decided.
struct Correction {
  std::size_t family = 0;              // the verdicts corrected together
  double level = 0.0;                  // the two-sided level Holm's procedure decided this one at
  double p_adjusted = 1.0;             // Holm's adjusted p-value
  double ci_low = 0.0, ci_high = 0.0;  // the paired gap's interval at confidence 1 − level
};

// One group's verdict on one of the sweep's criteria (verdict.hpp).
struct VerdictRow {
  std::size_t criterion;  // index into Report::index.criteria
  std::string group;
  Judgement judgement;  // the report's verdict: corrected for the sweep's number of verdicts
  PairedGap gap;        // what the judgement read: the group against the criterion's baseline
  Judgement uncorrected{};                  // judge()'s, this verdict alone at 95%
  std::optional<Correction> correction{};   // where an interval decided
  std::optional<std::size_t> seeds_needed{};  // seeds for 80% power at the family's Bonferroni level
};

struct Report {
  std::filesystem::path dir;
  SweepIndex index;
  std::vector<RunData> runs;  // in index order
  std::vector<GroupSummary> groups;  // in order of first appearance
  std::vector<VerdictRow> verdicts;  // per criterion, every group but its baseline, in group order
};

// A group's baseline for preset P ("bf16", "fp32") is the group whose runs all use P as it stands
// (not a recipe built on it) and whose settings other than quant.* and seed equal this group's;
// failing that, the only such group.
Report build_report(const std::filesystem::path& dir);

// The group of that name; null when there is none.
const GroupSummary* find_group(const Report& report, const std::string& name);

}  // namespace altgrad::report
