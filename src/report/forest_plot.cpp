#include "report/forest_plot.hpp"

#include <algorithm>

namespace altgrad::report {
namespace {

ForestRow& row_for(std::vector<ForestRow>& rows, const VerdictRow& v, const std::string& baseline) {
  for (ForestRow& row : rows) {
    if (row.group == v.group && row.baseline == baseline) return row;
  }
  ForestRow& row = rows.emplace_back();
  row.group = v.group;
  row.baseline = baseline;
  row.gap = &v.gap;
  return row;
}

std::size_t loosest_verdict(const Report& report, const ForestRow& row) {
  std::size_t loosest = row.verdicts.front();
  for (const std::size_t v : row.verdicts) {
    const double threshold = report.index.criteria[report.verdicts[v].criterion].max_gap_pct;
    if (threshold > report.index.criteria[report.verdicts[loosest].criterion].max_gap_pct) loosest = v;
  }
  return loosest;
}

}  // namespace

std::vector<ForestRow> forest_rows(const Report& report) {
  std::vector<ForestRow> rows;
  for (std::size_t i = 0; i < report.verdicts.size(); ++i) {
    const VerdictRow& v = report.verdicts[i];
    row_for(rows, v, report.index.criteria[v.criterion].baseline).verdicts.push_back(i);
  }
  for (ForestRow& row : rows) {
    row.coloured_by = loosest_verdict(report, row);
    row.colour = report.verdicts[row.coloured_by].judgement.verdict;
  }
  // Verdicts are listed per criterion; the plot reads down the groups as the tables do.
  const auto position = [&](const ForestRow& row) {
    return std::find_if(report.groups.begin(), report.groups.end(), [&](const GroupSummary& g) { return g.name == row.group; }) -
           report.groups.begin();
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const ForestRow& a, const ForestRow& b) { return position(a) < position(b); });
  return rows;
}

std::vector<double> forest_thresholds(const Report& report) {
  std::vector<double> thresholds;
  for (const Criterion& c : report.index.criteria) thresholds.push_back(c.max_gap_pct);
  std::sort(thresholds.begin(), thresholds.end());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
  return thresholds;
}

}  // namespace altgrad::report
