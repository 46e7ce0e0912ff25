#include "report/comparison.hpp"

#include "report/report_model.hpp"
#include "report/series_math.hpp"

namespace altgrad::report {
namespace {

std::optional<double> gap_of_means(const GroupSummary& group, const GroupSummary& base) {
  if (!group.val_loss.n || !base.val_loss.n) return std::nullopt;
  return gap_percent(group.val_loss.mean, base.val_loss.mean);
}

std::optional<Comparison> preset_baseline(const GroupSummary& group, const std::optional<std::string>& baseline,
                                          const std::optional<double>& gap, const PairedGap& paired) {
  if (!baseline || *baseline == group.name) return std::nullopt;
  return Comparison{*baseline, gap, paired};
}

}  // namespace

std::optional<Comparison> choose_comparison(const Report& report, const GroupSummary& group) {
  for (const VerdictRow& v : report.verdicts) {
    if (v.group != group.name) continue;
    const GroupSummary* base = find_group(report, report.index.criteria[v.criterion].baseline);
    if (base) return Comparison{base->name, gap_of_means(group, *base), v.gap};
  }
  // A sweep with criteria has said what to compare with: no other baseline slips into the column.
  if (!report.index.criteria.empty()) return std::nullopt;
  if (auto bf16 = preset_baseline(group, group.bf16_baseline, group.gap_bf16_pct, group.paired_bf16)) return bf16;
  return preset_baseline(group, group.fp32_baseline, group.gap_fp32_pct, group.paired_fp32);
}

}  // namespace altgrad::report
