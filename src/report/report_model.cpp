#include "report/report_model.hpp"

#include <algorithm>

#include "report/series_math.hpp"

namespace altgrad::report {
namespace {

// A run's settings without those the baseline comparison ignores.
nlohmann::json comparable_settings(const RunEntry& run) {
  nlohmann::json kept = nlohmann::json::object();
  for (const auto& [key, value] : run.settings.items()) {
    if (key != "seed" && key.rfind("quant", 0) != 0) kept[key] = value;
  }
  return kept;
}

void summarize_val_loss(const Report& report, GroupSummary& group) {
  std::vector<double> finals;
  for (std::size_t i : group.runs) {
    const RunData& run = report.runs[i];
    if (run.diverged()) {
      ++group.diverged;
    } else if (const auto v = run.final_value("val_loss")) {
      finals.push_back(*v);
    }
  }
  if (finals.empty()) return;
  double sum = 0.0;
  for (double v : finals) sum += v;
  group.val_loss_mean = sum / static_cast<double>(finals.size());
  group.val_loss_min = *std::min_element(finals.begin(), finals.end());
  group.val_loss_max = *std::max_element(finals.begin(), finals.end());
}

std::optional<std::size_t> find_baseline(const Report& report, const GroupSummary& group, const std::string& preset) {
  std::vector<std::size_t> candidates;
  for (std::size_t g = 0; g < report.groups.size(); ++g) {
    if (report.groups[g].preset == preset) candidates.push_back(g);
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
      name = base.name;
      if (group.val_loss_mean && base.val_loss_mean) gap = gap_percent(*group.val_loss_mean, *base.val_loss_mean);
    }
  }
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
  }
  for (GroupSummary& group : report.groups) summarize_val_loss(report, group);
  add_gaps(report);
  return report;
}

}  // namespace altgrad::report
