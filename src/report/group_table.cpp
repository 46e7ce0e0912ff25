#include "report/group_table.hpp"

namespace altgrad::report {
namespace {

using nlohmann::json;

json number(const std::optional<double>& value) { return value ? json(*value) : json(); }

// The baseline, the gap of the means, the paired gap (mean, interval, seeds, seeds agreeing), then
// the spreads' ratio and its two tests.
void add_comparison(std::vector<json>& row, const std::optional<Comparison>& c) {
  if (!c) {
    row.insert(row.end(), 10, json());
    return;
  }
  const MeanEstimate& e = c->paired.gap_pct;
  row.insert(row.end(), {c->baseline, number(c->gap_pct), e.n ? json(e.mean) : json(), number(e.ci_low),
                         number(e.ci_high), e.n, e.n ? json(c->paired.same_sign) : json()});
  const std::optional<SpreadTest>& s = c->spread;
  row.insert(row.end(), {s ? json(s->sd_ratio) : json(), s ? json(s->f_p) : json(), s ? number(s->levene_p) : json()});
}

void add_warnings(std::vector<json>& row, const WarningCount& w) {
  if (w.runs == 0) {
    row.insert(row.end(), 3, json());
    return;
  }
  row.insert(row.end(), {w.total, w.min_per_run, w.max_per_run});
}

void add_cost(std::vector<json>& row, const GroupSummary& g) {
  const json ended = g.cost_runs ? json(g.cost_runs) : json();
  row.insert(row.end(), {ended, g.cost_runs ? json(g.reached) : json(), number(g.tokens_to_target),
                         number(g.seconds_to_target), number(g.peak_rss_mib), number(g.checkpoint_mib)});
}

std::vector<json> group_row(const GroupSummary& g) {
  const MeanEstimate& e = g.val_loss;
  const json half_width = e.ci_high ? json(*e.ci_high - e.mean) : json();
  std::vector<json> row = {g.name, g.preset.empty() ? json() : json(g.preset), g.runs.size(), g.diverged, e.n,
                           number(g.val_loss_mean()), half_width, e.n > 1 ? json(e.sd) : json(),
                           number(g.val_loss_min), number(g.val_loss_max)};
  add_comparison(row, g.comparison);
  add_warnings(row, g.warnings);
  add_cost(row, g);
  return row;
}

}  // namespace

const std::vector<GroupColumn>& group_columns() {
  static const std::vector<GroupColumn> columns = {
      {"group"}, {"base preset"}, {"runs"}, {"diverged"}, {"seeds"},
      {"val loss mean"}, {"val loss ±95%"}, {"val loss sd"}, {"val loss min"}, {"val loss max"},
      {"baseline"}, {"gap %"}, {"paired gap %"}, {"paired low %"}, {"paired high %"}, {"paired seeds"},
      {"seeds agreeing"}, {"sd ratio"}, {"sd F test p"}, {"sd Levene p"},
      {"warnings"}, {"warnings/run min"}, {"warnings/run max"},
      {"ended"}, {"reached target"}, {"tokens to target"}, {"s to target", true}, {"peak RSS MiB", true},
      {"checkpoint MiB"}};
  return columns;
}

std::vector<std::vector<json>> group_rows(const Report& report) {
  std::vector<std::vector<json>> rows;
  for (const GroupSummary& g : report.groups) rows.push_back(group_row(g));
  return rows;
}

}  // namespace altgrad::report
