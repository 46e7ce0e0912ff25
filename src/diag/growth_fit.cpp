#include "diag/growth_fit.hpp"

namespace altgrad::diag {

GrowthFit log2_growth(std::span<const double> y) {
  const double n = static_cast<double>(y.size());
  if (y.size() < 3) return {};
  double mean_y = 0;
  for (const double v : y) mean_y += v / n;
  const double mean_x = (n - 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double dx = static_cast<double>(i) - mean_x, dy = y[i] - mean_y;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (syy == 0) return {};
  return {sxy / sxx, sxy * sxy / (sxx * syy)};
}

}  // namespace altgrad::diag
