#include "report/spread_test.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace altgrad::report {
namespace {

// 1 + d1/(1 + d2/(1 + …)) with DLMF 8.17.22's coefficients, by the modified Lentz method; it
// converges fast where x < (a + 1)/(a + b + 2), which the caller arranges by symmetry.
double beta_continued_fraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300;
  const auto coefficient = [&](int j) {
    const double m = j / 2;
    if (j % 2 == 0) return m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
    return -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
  };
  double f = 1.0, c = 1.0, d = 0.0;
  for (int j = 1; j < 10000; ++j) {
    const double dj = coefficient(j);
    d = 1.0 + dj * d;
    c = 1.0 + dj / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = c * d;
    f *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) return f;
  }
  return f;
}

double median_of(std::span<const double> x) {
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

std::vector<double> deviations_from_median(std::span<const double> x) {
  const double median = median_of(x);
  std::vector<double> z;
  for (double v : x) z.push_back(std::fabs(v - median));
  return z;
}

// Brown–Forsythe's W for two groups: a one-way analysis of variance of the deviations.
std::optional<double> brown_forsythe_p(std::span<const double> a, std::span<const double> b) {
  const std::vector<double> za = deviations_from_median(a), zb = deviations_from_median(b);
  const double ma = estimate_mean(za).mean, mb = estimate_mean(zb).mean;
  const double na = static_cast<double>(za.size()), nb = static_cast<double>(zb.size());
  const double grand = (na * ma + nb * mb) / (na + nb);
  const double between = na * (ma - grand) * (ma - grand) + nb * (mb - grand) * (mb - grand);
  double within = 0.0;
  for (double z : za) within += (z - ma) * (z - ma);
  for (double z : zb) within += (z - mb) * (z - mb);
  if (within == 0.0) return std::nullopt;
  const double w = (na + nb - 2.0) * between / within;
  return 1.0 - f_cdf(w, 1.0, na + nb - 2.0);
}

}  // namespace

double regularized_incomplete_beta(double x, double a, double b) {
  if (!(x >= 0.0 && x <= 1.0) || !(a > 0.0) || !(b > 0.0)) {
    throw std::invalid_argument("regularized_incomplete_beta: needs 0 <= x <= 1 and a, b > 0, got x = " +
                                std::to_string(x) + ", a = " + std::to_string(a) + ", b = " + std::to_string(b));
  }
  if (x == 0.0 || x == 1.0) return x;
  // I_x(a, b) = 1 − I_{1−x}(b, a): evaluate the fraction on the side where it converges quickly.
  if (x > (a + 1.0) / (a + b + 2.0)) return 1.0 - regularized_incomplete_beta(1.0 - x, b, a);
  const double log_front =
      a * std::log(x) + b * std::log1p(-x) - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b)) - std::log(a);
  return std::exp(log_front) / beta_continued_fraction(x, a, b);
}

double f_cdf(double f, double d1, double d2) {
  if (std::isnan(f)) return std::numeric_limits<double>::quiet_NaN();
  if (f <= 0.0) return 0.0;
  if (std::isinf(f)) return 1.0;
  return regularized_incomplete_beta(d1 * f / (d1 * f + d2), d1 / 2.0, d2 / 2.0);
}

std::optional<SpreadTest> spread_test(std::span<const double> group, std::span<const double> baseline) {
  if (group.size() < 2 || baseline.size() < 2) return std::nullopt;
  const double sg = estimate_mean(group).sd, sb = estimate_mean(baseline).sd;
  if (sg == 0.0 || sb == 0.0) return std::nullopt;
  SpreadTest t;
  t.sd_ratio = sg / sb;
  const double lower = f_cdf(t.sd_ratio * t.sd_ratio, static_cast<double>(group.size() - 1),
                             static_cast<double>(baseline.size() - 1));
  t.f_p = std::min(1.0, 2.0 * std::min(lower, 1.0 - lower));
  t.levene_p = brown_forsythe_p(group, baseline);
  return t;
}

}  // namespace altgrad::report
