#include "report/comparison.hpp"

#include "report/report_model.hpp"
#include "report/series_math.hpp"

namespace altgrad::report {
namespace {

std::optional<double> gap_of_means(const GroupSummary& group, const GroupSummary& base) {
  if (!group.val_loss.n || !base.val_loss.n) return std::nullopt;
  return gap_percent(group.val_loss.mean, base.val_loss.mean);
}

std::optional<Comparison> compared(const GroupSummary& group, const GroupSummary& base, const PairedGap& paired) {
  return Comparison{base.name, gap_of_means(group, base), paired, spread_test(group.val_losses, base.val_losses)};
}

std::optional<Comparison> preset_baseline(const Report& report, const GroupSummary& group,
                                          const std::optional<std::string>& baseline, const PairedGap& paired) {
  if (!baseline || *baseline == group.name) return std::nullopt;
  const GroupSummary* base = find_group(report, *baseline);
  if (base == nullptr) return std::nullopt;
  return compared(group, *base, paired);
}

}  // namespace

std::optional<Comparison> choose_comparison(const Report& report, const GroupSummary& group) {
  for (const VerdictRow& v : report.verdicts) {
    if (v.group != group.name) continue;
    const GroupSummary* base = find_group(report, report.index.criteria[v.criterion].baseline);
    if (base) return compared(group, *base, v.gap);
  }
  // A sweep with criteria has said what to compare with: no other baseline slips into the column.
  if (!report.index.criteria.empty()) return std::nullopt;
  if (auto bf16 = preset_baseline(report, group, group.bf16_baseline, group.paired_bf16)) return bf16;
  return preset_baseline(report, group, group.fp32_baseline, group.paired_fp32);
}

}  // namespace altgrad::report
