#pragma once
// The group table, defined once for report.md and report.html: one row per group, every number in
// a column of its own so that a column reads down at a glance. Sentences stay out of its cells:
// the reading of a gap ("not resolved with 3 seeds") is in the verdict table.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report_model.hpp"

namespace altgrad::report {

struct GroupColumn {
  std::string header;
  // Seconds and memory, which the machine decides: on the page, not in report.md (two machines
  // that ran one sweep write the same report.md, byte for byte).
  bool machine_dependent = false;
};
const std::vector<GroupColumn>& group_columns();

// A row per group in group order, a cell per column: a string, an integer, a double, or null
// where there is nothing to show.
std::vector<std::vector<nlohmann::json>> group_rows(const Report& report);

}  // namespace altgrad::report
