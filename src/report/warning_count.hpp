#pragma once
// How many warnings a group's runs raised: the start of reading a recipe's health. Start-up events
// (run_data.hpp) are not warnings and are not counted.
#include <cstddef>
#include <string>
#include <vector>

#include "report/run_data.hpp"

namespace altgrad::report {

// Over the runs that started (not pending: a run with no metrics yet has had no chance to warn).
struct WarningCount {
  std::size_t runs = 0;  // the runs counted; 0 leaves the other fields meaningless
  std::size_t total = 0;
  std::size_t min_per_run = 0, max_per_run = 0;
};
WarningCount count_warnings(const std::vector<const RunData*>& runs);

// "warnings 0", "warnings 4 per run", "warnings 3-5 per run"; "" when no run started.
std::string warning_text(const WarningCount& count);

}  // namespace altgrad::report
