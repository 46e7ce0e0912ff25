#include "report/tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "report/group_table.hpp"
#include "report/threshold_summary.hpp"
#include "report/verdict_correction.hpp"

namespace altgrad::report {
namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string optional_number(const std::optional<double>& value) { return value ? format_number(*value) : ""; }

std::string md_cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out.empty() ? "—" : out;
}

std::string first_warning(const RunData& run) {
  if (run.warnings.empty()) return "";
  const Warning& w = run.warnings.front();
  return "step " + std::to_string(w.step) + ": " + w.kind + (w.where.empty() ? "" : " at " + w.where);
}

std::string cell_text(const nlohmann::json& cell) {
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_number_integer()) return cell.dump();
  if (cell.is_number()) return format_number(cell.get<double>());
  return "";
}

void group_table(const Report& report, std::ostringstream& md) {
  md << "## Groups\n\nEach group as the sweep file names it, with the preset its recipe starts from. Final "
        "validation loss over the group's seeds: mean, 95% Student t half width, standard deviation, range. Gaps "
        "in % of the baseline's mean, and paired seed by seed: mean, 95% interval, paired seeds and those agreeing "
        "in sign with the mean (the verdicts say what they mean). Warnings raised, in all and per run. Cost of the "
        "result: the runs that ended and those that reached target_loss, the mean tokens they took, the mean size of "
        "the last checkpoint (seconds and peak memory, which the machine decides, are in report.html and "
        "summary.csv).\n\n|";
  const auto& columns = group_columns();
  for (const GroupColumn& c : columns) {
    if (!c.machine_dependent) md << " " << c.header << " |";
  }
  md << "\n|";
  for (const GroupColumn& c : columns) {
    if (!c.machine_dependent) md << "---|";
  }
  md << "\n";
  for (const auto& row : group_rows(report)) {
    md << "|";
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (!columns[i].machine_dependent) md << " " << md_cell(cell_text(row[i])) << " |";
    }
    md << "\n";
  }
}

// The range fit ranking of each group's first run that profiled its points: where the candidate
// format would fit, best first.
void range_fit_tables(const Report& report, std::ostringstream& md) {
  bool heading = false;
  for (const GroupSummary& g : report.groups) {
    for (const std::size_t r : g.runs) {
      const RunData& run = report.runs[r];
      const auto fits = run.range_fit_ranking();
      if (fits.empty()) continue;
      if (!heading) {
        md << "\n## Range fit\n\nEach group's first profiled run, its last profiled step: every quantization point "
              "ranked by how many of its values the candidate format (range_fit_format) would lose to overflow or "
              "flush to zero at the scale that point's scaling would choose, best fit first.\n";
        heading = true;
      }
      md << "\n### " << g.name << ": " << run.range_fit_format << " (run " << run.name << ")\n\n"
         << "| point | overflow % | flush % | subnormal % |\n|---|---|---|---|\n";
      for (const RunData::PointFit& f : fits) {
        md << "| " << md_cell(f.point) << " | " << format_number(f.overflow_pct) << " | " << format_number(f.flush_pct)
           << " | " << format_number(f.subnormal_pct) << " |\n";
      }
      break;
    }
  }
}

void verdict_table(const Report& report, std::ostringstream& md) {
  if (report.verdicts.empty()) return;
  md << "\n## Verdicts\n\nEach criterion of the sweep file, for every group but its baseline: pass when the "
        "interval of the paired gap lies within the threshold, fail when it lies above it or a run diverged, "
        "inconclusive otherwise. The verdict is corrected for the sweep's number of verdicts (Holm's procedure: "
        "each interval at the level the procedure gives it); `alone` is the verdict at 95% by itself. The sign "
        "test asks whether the seeds' gaps share a sign more often than coins would; the seeds column says how "
        "many seeds this seed-to-seed spread needs to resolve the criterion with 80% power at the strictest "
        "corrected level (docs/experiments.md, \"Verdicts\").\n\n"
        "| criterion | group | verdict | alone | why | sign test | seeds for 80% power | sign of the gap |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const VerdictRow& v : report.verdicts) {
    const Criterion& c = report.index.criteria[v.criterion];
    md << "| " << md_cell(criterion_name(c)) << " | " << md_cell(v.group) << " | " << verdict_name(v.judgement.verdict)
       << " | " << verdict_name(v.uncorrected.verdict) << " | " << md_cell(v.judgement.why) << " | "
       << md_cell(sign_test_words(v.gap)) << " | " << seeds_words(v) << " | " << md_cell(reading(v.gap)) << " |\n";
  }
}

void run_table(const Report& report, std::ostringstream& md) {
  md << "\n## Runs\n\n| run | group | seed | status | last step | final val loss | first warning |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    const RunData& run = report.runs[i];
    md << "| " << md_cell(run.name) << " | " << md_cell(report.index.runs[i].group) << " | " << report.index.runs[i].seed
       << " | " << md_cell(run.status) << " | " << run.last_step << " | "
       << md_cell(optional_number(run.final_value("val_loss"))) << " | " << md_cell(first_warning(run)) << " |\n";
  }
}

// Groups searched at several seeds: the geometric mean of the seeds' bracket midpoints and its 95%
// interval (threshold_summary.hpp).
void threshold_table(const Report& report, std::ostringstream& md) {
  const auto summaries = threshold_summaries(report.index.searches);
  if (summaries.empty()) return;
  md << "\n### Thresholds over seeds\n\nEach seed's threshold is its bracket's midpoint on the log scale, √(stable · "
        "diverged); the group's is their geometric mean, with the 95% Student t interval over seeds taken on log10. "
        "Resolution: half the widest bracket, as a factor, how far one seed's midpoint may be from its threshold.\n\n"
     << "| group | key | seeds | threshold | 95% interval | resolution | per seed | outside the range | unfinished |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  for (const ThresholdSummary& t : summaries) {
    std::string per_seed;
    for (std::size_t i = 0; i < t.seeds.size(); ++i) {
      per_seed += (per_seed.empty() ? "" : "; ") + std::to_string(t.seeds[i]) + ": " + format_number(t.estimates[i]);
    }
    const MeanEstimate& e = t.log10_estimate;
    const std::string interval = e.ci_low ? "[" + format_number(std::pow(10.0, *e.ci_low)) + ", " +
                                                format_number(std::pow(10.0, *e.ci_high)) + "]"
                                          : "";
    md << "| " << md_cell(t.group) << " | " << md_cell(t.key) << " | " << e.n << " | "
       << (e.n ? format_number(t.geometric_mean()) : "") << " | " << interval << " | "
       << (e.n ? "×" + format_number(std::pow(10.0, t.resolution_log10)) : "") << " | " << md_cell(per_seed) << " | "
       << t.outside_range << " | " << t.unfinished << " |\n";
  }
}

void search_table(const Report& report, std::ostringstream& md) {
  if (report.index.searches.empty()) return;
  md << "\n## Stability thresholds\n\n| group | seed | key | largest stable | smallest diverged | probes |\n"
     << "|---|---|---|---|---|---|\n";
  for (const Search& s : report.index.searches) {
    std::string probes;
    for (const Probe& p : s.probes) {
      probes += (probes.empty() ? "" : "; ") + format_number(p.value) + (p.diverged ? " diverged" : " stable");
    }
    md << "| " << md_cell(s.group) << " | " << (s.seed ? std::to_string(*s.seed) : "") << " | " << md_cell(s.key) << " | "
       << md_cell(s.bracket ? format_number(s.bracket->first) : "") << " | "
       << md_cell(s.bracket ? format_number(s.bracket->second) : "") << " | " << md_cell(probes) << " |\n";
  }
  threshold_table(report, md);
}

void event_table(const Report& report, std::ostringstream& md) {
  md << "\n## Warnings and stop reasons\n\n| run | step | kind | where | value | threshold |\n|---|---|---|---|---|---|\n";
  for (const RunData& run : report.runs) {
    for (const Warning& w : run.warnings) {
      md << "| " << md_cell(run.name) << " | " << w.step << " | " << md_cell(w.kind) << " | " << md_cell(w.where) << " | "
         << md_cell(format_number(w.value)) << " | " << md_cell(format_number(w.threshold)) << " |\n";
    }
    if (run.stop_step) {
      md << "| " << md_cell(run.name) << " | " << *run.stop_step << " | stop | " << md_cell(run.status) << " | — | — |\n";
    }
  }
}

// Listed apart from the warnings: expected at start-up, they say nothing of the recipe's health.
void start_up_table(const Report& report, std::ostringstream& md) {
  const bool any = std::any_of(report.runs.begin(), report.runs.end(), [](const RunData& r) { return !r.start_up.empty(); });
  if (!any) return;
  md << "\n## Start-up events\n\n| run | step | kind | point | statistic | value | message |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const RunData& run : report.runs) {
    for (const StartUpEvent& e : run.start_up) {
      md << "| " << md_cell(run.name) << " | " << e.step << " | " << md_cell(e.kind) << " | " << md_cell(e.point) << " | "
         << md_cell(e.statistic) << " | " << md_cell(format_number(e.value)) << " | " << md_cell(e.message) << " |\n";
    }
  }
}

}  // namespace

std::string format_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

std::vector<std::string> metric_keys(const Report& report) {
  std::set<std::string> keys;
  for (const RunData& run : report.runs) {
    for (const auto& [key, series] : run.series) keys.insert(key);
  }
  return {keys.begin(), keys.end()};
}

std::string summary_csv(const Report& report) {
  const auto keys = metric_keys(report);
  std::ostringstream csv;
  csv << "run,group,seed,status,last_step,final_val_loss,target_reached,tokens_to_target,seconds_to_target,"
         "train_seconds,peak_rss_mib,checkpoint_mib";
  for (const auto& key : keys) csv << "," << csv_field(key);
  csv << "\n";
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    const RunData& run = report.runs[i];
    csv << csv_field(run.name) << "," << csv_field(report.index.runs[i].group) << "," << report.index.runs[i].seed << ","
        << csv_field(run.status) << "," << run.last_step << "," << optional_number(run.final_value("val_loss"));
    const auto cost = [&](auto field) { return run.cost ? optional_number(field(*run.cost)) : std::string(); };
    csv << "," << (run.cost ? (run.cost->reached ? "true" : "false") : "")
        << "," << cost([](const RunCost& c) { return c.tokens; }) << "," << cost([](const RunCost& c) { return c.seconds; })
        << "," << cost([](const RunCost& c) { return std::optional(c.train_seconds); })
        << "," << cost([](const RunCost& c) { return std::optional(c.peak_rss_mib); })
        << "," << cost([](const RunCost& c) { return std::optional(c.checkpoint_mib); });
    for (const auto& key : keys) csv << "," << optional_number(run.final_value(key));
    csv << "\n";
  }
  return csv.str();
}

std::string report_markdown(const Report& report) {
  std::ostringstream md;
  md << "# Report: " << report.dir.string() << "\n\n";
  group_table(report, md);
  verdict_table(report, md);
  run_table(report, md);
  search_table(report, md);
  range_fit_tables(report, md);
  event_table(report, md);
  start_up_table(report, md);
  return md.str();
}

}  // namespace altgrad::report
