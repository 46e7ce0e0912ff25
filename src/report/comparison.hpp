#pragma once
// The one baseline a group's row of the group table is compared with. One gap per row keeps the
// table's numbers in columns of their own; the forest plot draws the same gaps (forest_plot.hpp).
#include <optional>
#include <string>

#include "report/spread_test.hpp"
#include "report/statistics.hpp"

namespace altgrad::report {

struct Report;
struct GroupSummary;

struct Comparison {
  std::string baseline;           // the baseline group's name
  std::optional<double> gap_pct;  // between the two groups' mean final val losses
  PairedGap paired;               // seed by seed: the very gap the verdict judged, where there is one
  std::optional<SpreadTest> spread;  // the two groups' seed-to-seed spreads, all their final val losses
};

// The baseline of the sweep's first criterion that judges this group (so the table, the verdicts
// and the forest plot show one number); a sweep without criteria compares with the group's bf16
// baseline, else its fp32 one (report_model.hpp). None for a baseline itself.
std::optional<Comparison> choose_comparison(const Report& report, const GroupSummary& group);

}  // namespace altgrad::report
