#include "train/quant_metrics.hpp"

#include <cmath>

namespace altgrad::train {
namespace {

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

void QuantMetrics::add_step(std::int64_t step, const TrainConfig& config, Warnings& warnings) {
  for (std::size_t i = 0; i < hooks_.size(); ++i) {
    const quant::PointQuantizer* point = hooks_.point(i);
    if (!point || point->step_stats().calls == 0) continue;
    const quant::PointStats& s = point->step_stats();
    interval_[i].merge(s);
    const std::string& name = hooks_.name(i);
    const double overflow = percent(s.values.overflow, s.values.count);
    const double underflow = percent(s.values.underflow, s.values.count);
    if (overflow > config.warn_overflow_pct) {
      warnings.warn(step, "overflow", name, overflow, config.warn_overflow_pct,
                    name + " overflows " + short_number(overflow) + "%" + " of its values (" + point->settings().format_name +
                        ", threshold " + short_number(config.warn_overflow_pct) + "%" + ")");
    }
    if (underflow > config.warn_underflow_pct) {
      warnings.warn(step, "underflow", name, underflow, config.warn_underflow_pct,
                    name + " flushes " + short_number(underflow) + "%" + " of its values to zero (" +
                        point->settings().format_name + ", threshold " + short_number(config.warn_underflow_pct) + "%" + ")");
    }
  }
}

nlohmann::json QuantMetrics::take(ScalarLog& scalars) {
  nlohmann::json points = nlohmann::json::object();
  for (std::size_t i = 0; i < hooks_.size(); ++i) {
    const quant::PointStats& s = interval_[i];
    if (s.calls == 0) continue;
    const std::string& name = hooks_.name(i);
    nlohmann::json stats = {{"overflow_pct", percent(s.values.overflow, s.values.count)},
                            {"underflow_pct", percent(s.values.underflow, s.values.count)},
                            {"non_finite", s.values.nan_inputs + s.values.inf_inputs},
                            {"amax", s.values.amax},
                            {"scale", std::isfinite(s.scale) ? nlohmann::json(s.scale) : nlohmann::json()},
                            {"rel_error", s.values.relative_error()}};
    if (s.blocks) stats["clipped_blocks_pct"] = percent(s.clipped_blocks, s.blocks);
    for (const auto& [key, value] : stats.items()) {
      if (value.is_number()) scalars.add("quant/" + name + "/" + key, value.get<double>());
    }
    points[name] = std::move(stats);
    interval_[i] = quant::PointStats{};
  }
  return points;
}

}  // namespace altgrad::train
