#pragma once
// The forest plot at the top of report.html: one row per group and baseline the sweep's criteria
// compare, its paired gap with the 95% interval, the criteria's thresholds as vertical lines, and
// the verdict as the marker's colour, with the interval that verdict was decided on (Holm's,
// verdict_correction.hpp) drawn behind the 95% one. Its numbers are the verdicts' own gaps (VerdictRow::gap), so
// the plot, the verdict table and the group table show one computation.
#include <cstddef>
#include <string>
#include <vector>

#include "report/report_model.hpp"

namespace altgrad::report {

struct ForestRow {
  std::string group, baseline;
  const PairedGap* gap = nullptr;     // the first of `verdicts`' gaps: one per group and baseline
  std::vector<std::size_t> verdicts;  // indices into Report::verdicts, in criterion order
  // The verdict on the loosest criterion (the largest max_gap_pct, the first of equals): the
  // colour a reader takes as "how good can this recipe be called"; the tighter ones show as the
  // interval against their threshold lines, and each one's verdict is in the tooltip.
  Verdict colour = Verdict::inconclusive;
  std::size_t coloured_by = 0;  // that verdict: an index into Report::verdicts
};

// In group order; no rows without criteria. The rows point into `report`.
std::vector<ForestRow> forest_rows(const Report& report);

// Every criterion's max_gap_pct, ascending, each once.
std::vector<double> forest_thresholds(const Report& report);

}  // namespace altgrad::report
