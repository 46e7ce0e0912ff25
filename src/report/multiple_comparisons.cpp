#include "report/multiple_comparisons.hpp"

#include <algorithm>
#include <numeric>

namespace altgrad::report {

HolmLevels holm(std::span<const double> p, double alpha) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  HolmLevels out{std::vector<double>(m), std::vector<double>(m)};
  double running_max = 0.0;
  bool stopped = false;
  double stop_level = 0.0;
  for (std::size_t rank = 0; rank < m; ++rank) {
    const std::size_t i = order[rank];
    const double factor = static_cast<double>(m - rank);  // m − j + 1 for the 1-based rank j
    running_max = std::max(running_max, std::min(1.0, factor * p[i]));
    out.adjusted[i] = running_max;
    if (!stopped) {
      stop_level = alpha / factor;
      stopped = p[i] > stop_level;  // the first test the procedure keeps: it and all after are kept
    }
    out.level[i] = stop_level;
  }
  return out;
}

}  // namespace altgrad::report
