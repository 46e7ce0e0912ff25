#include "report/verdict.hpp"

#include <cmath>
#include <cstdio>

namespace altgrad::report {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::fail: return "fail";
    case Verdict::inconclusive: return "inconclusive";
  }
  return "?";
}

std::string criterion_name(const Criterion& c) {
  char text[64];
  std::snprintf(text, sizeof text, "within %g%% of ", c.max_gap_pct);
  return text + c.baseline + " (" + std::to_string(c.min_seeds) + " seeds, " + std::to_string(c.min_steps) + " steps)";
}

double threshold_p_value(const MeanEstimate& e, double threshold) {
  const double distance = e.mean - threshold;
  if (e.sd == 0.0) return distance == 0.0 ? 1.0 : 0.0;
  return t_two_sided_p(distance / (e.sd / std::sqrt(static_cast<double>(e.n))), static_cast<int>(e.n - 1));
}

Verdict interval_verdict(double low, double high, double threshold) {
  if (high <= threshold) return Verdict::pass;
  if (low > threshold) return Verdict::fail;
  return Verdict::inconclusive;
}

std::string interval_reading(Verdict v, double threshold) {
  char text[64];
  std::snprintf(text, sizeof text, "%g%%", threshold);
  switch (v) {
    case Verdict::pass: return std::string("upper end within ") + text;
    case Verdict::fail: return std::string("lower end above ") + text;
    case Verdict::inconclusive: break;
  }
  return std::string("straddles ") + text;
}

Judgement judge(const Criterion& c, const VerdictInputs& in) {
  const MeanEstimate& e = in.gap.gap_pct;
  char text[200];
  if (in.diverged > 0) {
    std::snprintf(text, sizeof text, "%d of %zu runs diverged", in.diverged, in.runs);
    return {Verdict::fail, text};
  }
  if (static_cast<std::int64_t>(e.n) < c.min_seeds || !e.ci_low) {
    std::snprintf(text, sizeof text, "%zu paired seed%s, %lld needed%s", e.n, e.n == 1 ? "" : "s",
                  static_cast<long long>(c.min_seeds), e.n < 2 ? " (an interval needs 2)" : "");
    return {Verdict::inconclusive, text};
  }
  if (in.fewest_steps < c.min_steps) {
    std::snprintf(text, sizeof text, "a run reached step %lld of the %lld needed", static_cast<long long>(in.fewest_steps),
                  static_cast<long long>(c.min_steps));
    return {Verdict::inconclusive, text};
  }
  std::snprintf(text, sizeof text, "gap %+.2f%% [%+.2f, %+.2f] over %zu seeds", e.mean, *e.ci_low, *e.ci_high, e.n);
  const std::string why = text;
  const double p = threshold_p_value(e, c.max_gap_pct);
  const Verdict verdict = interval_verdict(*e.ci_low, *e.ci_high, c.max_gap_pct);
  return {verdict, why + ", " + interval_reading(verdict, c.max_gap_pct), p};
}

}  // namespace altgrad::report
