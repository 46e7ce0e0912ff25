#include "report/warning_count.hpp"

#include <algorithm>

namespace altgrad::report {

WarningCount count_warnings(const std::vector<const RunData*>& runs) {
  WarningCount count;
  for (const RunData* run : runs) {
    if (run->status == "pending") continue;
    const std::size_t n = run->warnings.size();
    count.min_per_run = count.runs == 0 ? n : std::min(count.min_per_run, n);
    count.max_per_run = std::max(count.max_per_run, n);
    count.total += n;
    ++count.runs;
  }
  return count;
}

std::string warning_text(const WarningCount& count) {
  if (count.runs == 0) return "";
  if (count.total == 0) return "warnings 0";
  const std::string low = std::to_string(count.min_per_run), high = std::to_string(count.max_per_run);
  return "warnings " + (low == high ? low : low + "-" + high) + " per run";
}

}  // namespace altgrad::report
