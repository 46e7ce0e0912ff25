#include "report/report_model.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "report/series_math.hpp"
#include "report/verdict_correction.hpp"

namespace altgrad::report {
namespace {

void summarize_cost(const Report& report, GroupSummary& group) {
  double tokens = 0, seconds = 0, checkpoint = 0;
  for (const std::size_t r : group.runs) {
    const std::optional<RunCost>& cost = report.runs[r].cost;
    if (!cost) continue;
    ++group.cost_runs;
    checkpoint += cost->checkpoint_mib;
    group.peak_rss_mib = std::max(group.peak_rss_mib.value_or(0), cost->peak_rss_mib);
    if (!cost->reached) continue;
    ++group.reached;
    tokens += cost->tokens.value_or(0);
    seconds += cost->seconds.value_or(0);
  }
  if (group.cost_runs) group.checkpoint_mib = checkpoint / group.cost_runs;
  if (group.reached) {
    group.tokens_to_target = tokens / group.reached;
    group.seconds_to_target = seconds / group.reached;
  }
}

// A run's settings without those the baseline comparison ignores.
nlohmann::json comparable_settings(const RunEntry& run) {
  nlohmann::json kept = nlohmann::json::object();
  for (const auto& [key, value] : run.settings.items()) {
    if (key != "seed" && key.rfind("quant", 0) != 0) kept[key] = value;
  }
  return kept;
}

// The final val loss of each of the group's runs that did not diverge and logged one, by seed.
std::vector<SeedValue> final_val_losses(const Report& report, const GroupSummary& group) {
  std::vector<SeedValue> finals;
  for (std::size_t i : group.runs) {
    const RunData& run = report.runs[i];
    if (const auto v = run.final_value("val_loss"); v && !run.diverged()) {
      finals.push_back({report.index.runs[i].seed, *v, run.name});
    }
  }
  return finals;
}

void summarize_val_loss(const Report& report, GroupSummary& group) {
  for (std::size_t i : group.runs) group.diverged += report.runs[i].diverged();
  std::vector<double> finals;
  for (const SeedValue& s : final_val_losses(report, group)) finals.push_back(s.value);
  group.val_loss = estimate_mean(finals);
  group.val_losses = finals;
  if (finals.empty()) return;
  group.val_loss_min = *std::min_element(finals.begin(), finals.end());
  group.val_loss_max = *std::max_element(finals.begin(), finals.end());
}

std::optional<std::size_t> find_baseline(const Report& report, const GroupSummary& group, const std::string& preset) {
  std::vector<std::size_t> candidates;
  for (std::size_t g = 0; g < report.groups.size(); ++g) {
    if (report.groups[g].preset == preset && report.groups[g].preset_only) candidates.push_back(g);
  }
  const auto settings = comparable_settings(report.index.runs[group.runs.front()]);
  for (std::size_t g : candidates) {
    if (comparable_settings(report.index.runs[report.groups[g].runs.front()]) == settings) return g;
  }
  if (candidates.size() == 1) return candidates.front();
  return std::nullopt;
}

void add_gaps(Report& report) {
  for (GroupSummary& group : report.groups) {
    for (const char* preset : {"bf16", "fp32"}) {
      const auto g = find_baseline(report, group, preset);
      if (!g) continue;
      const GroupSummary& base = report.groups[*g];
      auto& name = std::string(preset) == "bf16" ? group.bf16_baseline : group.fp32_baseline;
      auto& gap = std::string(preset) == "bf16" ? group.gap_bf16_pct : group.gap_fp32_pct;
      auto& paired = std::string(preset) == "bf16" ? group.paired_bf16 : group.paired_fp32;
      name = base.name;
      if (group.val_loss.n && base.val_loss.n) gap = gap_percent(group.val_loss.mean, base.val_loss.mean);
      paired = paired_gap(final_val_losses(report, group), final_val_losses(report, base));
    }
  }
}

std::int64_t fewest_steps(const Report& report, const GroupSummary& group) {
  std::int64_t fewest = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i : group.runs) fewest = std::min(fewest, report.runs[i].last_step);
  return fewest;
}

void add_verdicts(Report& report) {
  for (std::size_t c = 0; c < report.index.criteria.size(); ++c) {
    const Criterion& criterion = report.index.criteria[c];
    const auto base = std::find_if(report.groups.begin(), report.groups.end(),
                                   [&](const GroupSummary& g) { return g.name == criterion.baseline; });
    for (const GroupSummary& group : report.groups) {
      if (base != report.groups.end() && group.name == base->name) continue;
      if (!criterion.groups.empty() &&
          std::find(criterion.groups.begin(), criterion.groups.end(), group.name) == criterion.groups.end()) {
        continue;
      }
      if (base == report.groups.end()) {
        report.verdicts.push_back({c, group.name, {Verdict::inconclusive, "no group '" + criterion.baseline + "'"}, {}});
        continue;
      }
      const VerdictInputs in{paired_gap(final_val_losses(report, group), final_val_losses(report, *base)),
                             group.diverged, group.runs.size(),
                             std::min(fewest_steps(report, group), fewest_steps(report, *base))};
      report.verdicts.push_back({c, group.name, judge(criterion, in), in.gap});
    }
  }
  correct_verdicts(report.verdicts, report.index.criteria);
}

}  // namespace

Report build_report(const std::filesystem::path& dir) {
  Report report;
  report.dir = dir;
  report.index = load_sweep_index(dir);
  for (const RunEntry& entry : report.index.runs) {
    report.runs.push_back(load_run(entry.dir, entry.name));
    const auto found = std::find_if(report.groups.begin(), report.groups.end(),
                                    [&](const GroupSummary& g) { return g.name == entry.group; });
    GroupSummary& group = found != report.groups.end() ? *found : report.groups.emplace_back();
    if (group.runs.empty()) group.name = entry.group;
    group.runs.push_back(report.runs.size() - 1);
    const std::string& preset = report.runs.back().preset;
    group.preset = group.runs.size() == 1 || group.preset == preset ? preset : "mixed";
    group.preset_only = group.preset_only && report.runs.back().preset_only;
  }
  for (GroupSummary& group : report.groups) {
    summarize_val_loss(report, group);
    summarize_cost(report, group);
    std::vector<const RunData*> runs;
    for (const std::size_t r : group.runs) runs.push_back(&report.runs[r]);
    group.warnings = count_warnings(runs);
  }
  add_gaps(report);
  add_verdicts(report);
  for (GroupSummary& group : report.groups) group.comparison = choose_comparison(report, group);
  return report;
}

const GroupSummary* find_group(const Report& report, const std::string& name) {
  for (const GroupSummary& g : report.groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

}  // namespace altgrad::report
