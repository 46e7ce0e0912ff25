#include "report/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <string>

namespace altgrad::report {

double t_central_probability(double t, int dof) {
  if (dof < 1) throw std::invalid_argument("t_central_probability: dof must be >= 1, got " + std::to_string(dof));
  if (std::isinf(t)) return 1.0;
  const double theta = std::atan(std::fabs(t) / std::sqrt(static_cast<double>(dof)));
  const double s = std::sin(theta), c = std::cos(theta), c2 = c * c;
  if (dof % 2 == 0) {
    // sin θ · (1 + (1/2) cos²θ + (1·3)/(2·4) cos⁴θ + … up to cos^(dof−2) θ)
    double term = 1.0, sum = 1.0;
    for (int j = 1; 2 * j <= dof - 2; ++j) {
      term *= c2 * (2.0 * j - 1.0) / (2.0 * j);
      sum += term;
    }
    return s * sum;
  }
  // (2/π) · (θ + sin θ · (cos θ + (2/3) cos³θ + (2·4)/(3·5) cos⁵θ + … up to cos^(dof−2) θ))
  double sum = 0.0;
  if (dof > 1) {
    double term = c;
    sum = c;
    for (int j = 1; 2 * j + 1 <= dof - 2; ++j) {
      term *= c2 * (2.0 * j) / (2.0 * j + 1.0);
      sum += term;
    }
  }
  return 2.0 / std::numbers::pi * (theta + s * sum);
}

double t_critical(double confidence, int dof) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    throw std::invalid_argument("t_critical: confidence must be in (0, 1), got " + std::to_string(confidence));
  }
  // P(|T| ≤ t) rises monotonically in t: bracket the root, then bisect to the last bit.
  double lo = 0.0, hi = 1.0;
  while (t_central_probability(hi, dof) < confidence) {
    lo = hi;
    hi *= 2.0;
  }
  for (int i = 0; i < 200 && hi - lo > 0.0; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (t_central_probability(mid, dof) < confidence ? lo : hi) = mid;
  }
  return hi;
}

double t_two_sided_p(double t, int dof) {
  if (std::isnan(t)) return 1.0;
  return std::max(0.0, 1.0 - t_central_probability(t, dof));
}

double sign_test_p(std::size_t positive, std::size_t n) {
  if (n == 0) return 1.0;
  const std::size_t majority = std::max(positive, n - positive);
  // P(X ≥ majority) = Σ_{k ≥ majority} C(n, k) / 2^n, each term by lgamma to stay finite at any n.
  double tail = 0.0;
  for (std::size_t k = majority; k <= n; ++k) {
    const double ln_choose = std::lgamma(static_cast<double>(n) + 1.0) - std::lgamma(static_cast<double>(k) + 1.0) -
                             std::lgamma(static_cast<double>(n - k) + 1.0);
    tail += std::exp(ln_choose - static_cast<double>(n) * std::numbers::ln2);
  }
  return std::min(1.0, 2.0 * tail);
}

std::optional<std::size_t> seeds_for_power(double sd, double distance, double alpha, double power, std::size_t limit) {
  if (distance == 0.0 || !std::isfinite(distance)) return std::nullopt;
  if (sd == 0.0) return 2;
  for (std::size_t n = 2; n <= limit; ++n) {
    const int dof = static_cast<int>(n - 1);
    // t_{1−α/2} is the two-sided critical value at 1 − α; t_{power} the one-sided quantile, the
    // two-sided critical value at 2·power − 1.
    const double needed = (t_critical(1.0 - alpha, dof) + t_critical(2.0 * power - 1.0, dof)) * sd / std::sqrt(static_cast<double>(n));
    if (needed <= std::fabs(distance)) return n;
  }
  return std::nullopt;
}

MeanEstimate estimate_mean(std::span<const double> values) {
  MeanEstimate e;
  e.n = values.size();
  if (e.n == 0) return e;
  double sum = 0.0;
  for (const double v : values) sum += v;
  e.mean = sum / static_cast<double>(e.n);
  if (e.n < 2) return e;
  double squares = 0.0;
  for (const double v : values) squares += (v - e.mean) * (v - e.mean);
  e.sd = std::sqrt(squares / static_cast<double>(e.n - 1));
  const double half_width = t_critical(kConfidence, static_cast<int>(e.n - 1)) * e.sd / std::sqrt(static_cast<double>(e.n));
  e.ci_low = e.mean - half_width;
  e.ci_high = e.mean + half_width;
  return e;
}

PairedGap paired_gap(const std::vector<SeedValue>& group, const std::vector<SeedValue>& baseline) {
  PairedGap result;
  std::vector<double> gaps;
  const auto partner = [](const std::vector<SeedValue>& side, std::int64_t seed) -> const SeedValue* {
    for (const SeedValue& s : side) {
      if (s.seed == seed) return &s;
    }
    return nullptr;
  };
  for (const SeedValue& g : group) {
    if (const SeedValue* b = partner(baseline, g.seed)) {
      gaps.push_back(100.0 * (g.value - b->value) / b->value);
    } else {
      result.unpaired.push_back(g.run);
    }
  }
  for (const SeedValue& b : baseline) {
    if (!partner(group, b.seed)) result.unpaired.push_back(b.run);
  }
  result.gap_pct = estimate_mean(gaps);
  for (const double gap : gaps) {
    result.same_sign += (gap > 0.0 && result.gap_pct.mean > 0.0) || (gap < 0.0 && result.gap_pct.mean < 0.0);
    result.positive += gap > 0.0;
    result.negative += gap < 0.0;
  }
  return result;
}

std::string reading(const PairedGap& gap) {
  const MeanEstimate& e = gap.gap_pct;
  std::string out = "resolved";
  if (e.n == 0) {
    out = "no paired seeds";
  } else if (!e.ci_low) {
    out = "1 paired seed: no interval";
  } else if (!e.resolved()) {
    out = "not resolved with " + std::to_string(e.n) + " seeds";
  }
  if (!gap.unpaired.empty()) {
    out += " (unpaired:";
    for (const std::string& run : gap.unpaired) out += " " + run;
    out += ")";
  }
  return out;
}

std::string sign_test_words(const PairedGap& gap) {
  const std::size_t nonzero = gap.positive + gap.negative;
  if (nonzero == 0) return "";
  char text[96];
  std::snprintf(text, sizeof text, "p = %.3g (%zu of %zu positive)", sign_test_p(gap.positive, nonzero), gap.positive,
                nonzero);
  return text;
}

std::string describe(const PairedGap& gap) {
  const MeanEstimate& e = gap.gap_pct;
  if (!e.ci_low) return reading(gap);
  char text[160];
  std::snprintf(text, sizeof text, "paired %+.2f%% [%+.2f, %+.2f], %zu of %zu seeds agree: ", e.mean, *e.ci_low,
                *e.ci_high, gap.same_sign, e.n);
  return text + reading(gap);
}

}  // namespace altgrad::report
