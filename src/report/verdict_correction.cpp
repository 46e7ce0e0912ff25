#include "report/verdict_correction.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "report/multiple_comparisons.hpp"

namespace altgrad::report {
namespace {

constexpr double kPower = 0.8;  // the power line's: the usual planning value

// The paired gap's interval at two-sided level `level`.
Correction corrected_interval(const MeanEstimate& e, std::size_t family, double level, double adjusted) {
  const double half = t_critical(1.0 - level, static_cast<int>(e.n - 1)) * e.sd / std::sqrt(static_cast<double>(e.n));
  return {family, level, adjusted, e.mean - half, e.mean + half};
}

std::string correction_words(const Correction& c, Verdict v, double threshold) {
  char text[160];
  std::snprintf(text, sizeof text, "; corrected for %zu verdicts (Holm): [%+.2f, %+.2f] at %.2f%%, ", c.family,
                c.ci_low, c.ci_high, 100.0 * (1.0 - c.level));
  return text + interval_reading(v, threshold);
}

}  // namespace

std::string seeds_words(const VerdictRow& row) {
  if (!row.correction) return "";
  return row.seeds_needed ? std::to_string(*row.seeds_needed) : "over 1000";
}

void correct_verdicts(std::vector<VerdictRow>& rows, const std::vector<Criterion>& criteria) {
  std::vector<std::size_t> decided;
  std::vector<double> p;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].uncorrected = rows[i].judgement;
    if (rows[i].judgement.p_value) {
      decided.push_back(i);
      p.push_back(*rows[i].judgement.p_value);
    }
  }
  const double alpha = 1.0 - kConfidence;
  const HolmLevels levels = holm(p, alpha);
  for (std::size_t t = 0; t < decided.size(); ++t) {
    VerdictRow& row = rows[decided[t]];
    const MeanEstimate& e = row.gap.gap_pct;
    const double threshold = criteria[row.criterion].max_gap_pct;
    const Correction c = corrected_interval(e, decided.size(), levels.level[t], levels.adjusted[t]);
    const Verdict v = interval_verdict(c.ci_low, c.ci_high, threshold);
    row.judgement.verdict = v;
    row.judgement.why = row.uncorrected.why + correction_words(c, v, threshold);
    row.correction = c;
    row.seeds_needed = seeds_for_power(e.sd, e.mean - threshold, alpha / static_cast<double>(decided.size()), kPower);
  }
}

}  // namespace altgrad::report
