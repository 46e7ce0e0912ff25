#include "report/tables.hpp"

#include <cstdio>
#include <set>
#include <sstream>

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

void group_table(const Report& report, std::ostringstream& md) {
  md << "## Groups\n\nFinal validation loss over each group's seeds: mean, standard deviation and 95% Student t "
        "interval; gaps in % of the baseline's mean, and paired seed by seed. Cost of the result: the runs that "
        "reached target_loss, the mean tokens they took, and the mean size of the last checkpoint (seconds and "
        "peak memory, which the machine decides, are in report.html and summary.csv).\n\n"
     << "| group | preset | runs | diverged | seeds | final val loss (mean) | sd | 95% CI | min | max | gap to bf16 % | "
        "paired vs bf16 | gap to fp32 % | paired vs fp32 | reached target | tokens to target | checkpoint MiB |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const GroupSummary& g : report.groups) {
    const MeanEstimate& e = g.val_loss;
    const std::string ci = e.ci_low ? "[" + format_number(*e.ci_low) + ", " + format_number(*e.ci_high) + "]" : "";
    const auto paired = [&](const std::optional<std::string>& baseline, const PairedGap& gap) {
      return baseline && *baseline != g.name ? describe(gap) : std::string();
    };
    md << "| " << md_cell(g.name) << " | " << md_cell(g.preset) << " | " << g.runs.size() << " | " << g.diverged << " | "
       << e.n << " | " << md_cell(optional_number(g.val_loss_mean())) << " | "
       << md_cell(e.n > 1 ? format_number(e.sd) : "") << " | " << md_cell(ci) << " | "
       << md_cell(optional_number(g.val_loss_min)) << " | " << md_cell(optional_number(g.val_loss_max)) << " | "
       << md_cell(optional_number(g.gap_bf16_pct)) << " | " << md_cell(paired(g.bf16_baseline, g.paired_bf16)) << " | "
       << md_cell(optional_number(g.gap_fp32_pct)) << " | " << md_cell(paired(g.fp32_baseline, g.paired_fp32)) << " | "
       << md_cell(g.cost_runs ? std::to_string(g.reached) + "/" + std::to_string(g.cost_runs) : "") << " | "
       << md_cell(optional_number(g.tokens_to_target)) << " | " << md_cell(optional_number(g.checkpoint_mib))
       << " |\n";
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
  md << "\n## Verdicts\n\nEach criterion of the sweep file, for every group but its baseline: pass when the 95% "
        "interval of the paired gap lies within the threshold, fail when it lies above it or a run diverged, "
        "inconclusive otherwise.\n\n| criterion | group | verdict | why |\n|---|---|---|---|\n";
  for (const VerdictRow& v : report.verdicts) {
    const Criterion& c = report.index.criteria[v.criterion];
    md << "| " << md_cell(criterion_name(c)) << " | " << md_cell(v.group) << " | " << verdict_name(v.judgement.verdict)
       << " | " << md_cell(v.judgement.why) << " |\n";
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

void search_table(const Report& report, std::ostringstream& md) {
  if (report.index.searches.empty()) return;
  md << "\n## Stability thresholds\n\n| group | key | largest stable | smallest diverged | probes |\n|---|---|---|---|---|\n";
  for (const Search& s : report.index.searches) {
    std::string probes;
    for (const Probe& p : s.probes) {
      probes += (probes.empty() ? "" : "; ") + format_number(p.value) + (p.diverged ? " diverged" : " stable");
    }
    md << "| " << md_cell(s.group) << " | " << md_cell(s.key) << " | "
       << md_cell(s.bracket ? format_number(s.bracket->first) : "") << " | "
       << md_cell(s.bracket ? format_number(s.bracket->second) : "") << " | " << md_cell(probes) << " |\n";
  }
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
  return md.str();
}

}  // namespace altgrad::report
