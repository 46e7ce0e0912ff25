#include "report/text_summary.hpp"

#include <algorithm>
#include <cstdio>

#include "report/verdict_correction.hpp"

namespace altgrad::report {
namespace {

std::string format_p(double p) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", p);
  return text;
}

std::string gap_text(const Report& report, const GroupSummary& g) {
  if (!g.val_loss_mean()) return "no val loss yet";
  const GroupSummary* base = g.bf16_baseline ? find_group(report, *g.bf16_baseline) : nullptr;
  if (!g.gap_bf16_pct || base == nullptr || !base->val_loss_mean()) return "no bf16 baseline";
  char text[96];
  std::snprintf(text, sizeof text, "%+.2f%% vs bf16 (%.4f)  ", *g.gap_bf16_pct, *base->val_loss_mean());
  return text + describe(g.paired_bf16);
}

// "sd ×0.23 of bf16's (F p = 0.04, Levene p = 0.12)": the spread of the group table's comparison.
std::string spread_text(const GroupSummary& g) {
  if (!g.comparison || !g.comparison->spread) return "";
  const SpreadTest& s = *g.comparison->spread;
  char text[160];
  std::snprintf(text, sizeof text, "sd ×%.3g of %s's (F p = %.3g, Levene p = ", s.sd_ratio, g.comparison->baseline.c_str(),
                s.f_p);
  return text + (s.levene_p ? format_p(*s.levene_p) : std::string("-")) + ")";
}

}  // namespace

std::string text_summary(const Report& report) {
  std::size_t width = 0;
  for (const GroupSummary& g : report.groups) width = std::max(width, g.name.size());
  std::string text;
  for (const GroupSummary& g : report.groups) {
    if (g.bf16_baseline == g.name) continue;  // the baseline itself: its loss is on the others' lines
    char loss[64] = "-";
    if (g.val_loss.ci_low) {
      std::snprintf(loss, sizeof loss, "%.4f ± %.4f (%zu seeds)", g.val_loss.mean, *g.val_loss.ci_high - g.val_loss.mean,
                    g.val_loss.n);
    } else if (g.val_loss.n) {
      std::snprintf(loss, sizeof loss, "%.4f (1 seed)", g.val_loss.mean);
    }
    std::string line = g.name + std::string(width - g.name.size(), ' ') + "  val loss " + loss + "  " + gap_text(report, g);
    if (const std::string spread = spread_text(g); !spread.empty()) line += "  " + spread;
    if (g.diverged > 0) {
      line += "  (" + std::to_string(g.diverged) + " of " + std::to_string(g.runs.size()) + " runs diverged)";
    }
    if (const std::string warnings = warning_text(g.warnings); !warnings.empty()) line += "  " + warnings;
    text += line + "\n";
  }
  for (const VerdictRow& v : report.verdicts) {
    const Criterion& c = report.index.criteria[v.criterion];
    char head[160];
    std::snprintf(head, sizeof head, "verdict %s: within %g%% of %s: ", v.group.c_str(), c.max_gap_pct, c.baseline.c_str());
    text += head + std::string(verdict_name(v.judgement.verdict)) + " (" + v.judgement.why + ")";
    if (v.correction) {
      text += std::string("; alone at 95%: ") + verdict_name(v.uncorrected.verdict);
      text += "; seeds for 80% power: " + seeds_words(v);
    }
    text += "\n";
  }
  return text;
}

}  // namespace altgrad::report
