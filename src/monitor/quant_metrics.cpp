#include "monitor/quant_metrics.hpp"

#include <algorithm>
#include <cmath>

#include "diag/growth_fit.hpp"

namespace altgrad::monitor {
namespace {

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

nlohmann::json stats_json(const quant::PointStats& s) {
  nlohmann::json stats = {{"overflow_pct", percent(s.values.overflow, s.values.count)},
                          {"underflow_pct", percent(s.values.underflow, s.values.count)},
                          {"zero_in_pct", percent(s.values.zero_inputs, s.values.count)},
                          {"zero_out_pct", percent(s.values.zero_inputs + s.values.underflow, s.values.count)},
                          {"non_finite", s.values.nan_inputs + s.values.inf_inputs},
                          {"amax", s.values.amax},
                          {"scale", std::isfinite(s.scale) ? nlohmann::json(s.scale) : nlohmann::json()},
                          {"rel_error", s.values.relative_error()}};
  if (s.blocks) stats["clipped_blocks_pct"] = percent(s.clipped_blocks, s.blocks);
  return stats;
}


}  // namespace

QuantMetrics::QuantMetrics(const precision::QuantHooks& hooks)
    : hooks_(hooks),
      interval_(hooks.size()),
      interval_columns_(hooks.size()),
      interval_gemms_(hooks.size()),
      last_scale_(hooks.size(), 0.0f),
      scale_changes_(hooks.size(), 0),
      log2_amax_(hooks.size()) {
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    if (hooks.point(i) && hooks.point(i)->delayed()) last_scale_[i] = hooks.point(i)->delayed()->scale();
  }
}

void QuantMetrics::add_step(std::int64_t step, const config::TrainConfig& config, Warnings& warnings) {
  for (std::size_t i = 0; i < hooks_.size(); ++i) {
    const quant::PointQuantizer* point = hooks_.point(i);
    if (!point) continue;
    if (const quant::DelayedScaling* delayed = point->delayed()) {
      scale_changes_[i] += delayed->scale() != last_scale_[i];
      last_scale_[i] = delayed->scale();
    }
    const std::string& name = hooks_.name(i);
    // The step just ended recorded the point's first amax: it had none to scale by.
    const bool without_history = point->delayed() && point->delayed()->amaxes_recorded() == 1;
    interval_[i].merge(point->step_stats());
    check_thresholds(step, config, warnings, point->settings(), {name, "", without_history}, point->step_stats());
    interval_columns_[i].merge(point->column_stats());
    check_thresholds(step, config, warnings, point->settings(), {name, "colwise", without_history},
                     point->column_stats());
    if (point->step_stats().calls) check_amax_growth(step, config, warnings, i, point->step_stats().values.amax);
  }
  add_gemm_copies(step, config, warnings);
}

// A GEMM's own copy is one axis of one GEMM: its calls are row-wise or column-wise, never both.
void QuantMetrics::add_gemm_copies(std::int64_t step, const config::TrainConfig& config, Warnings& warnings) {
  for (std::size_t i = 0; i < hooks_.size(); ++i) {
    for (std::size_t g = 0; g < recipe::kGemmCount; ++g) {
      const quant::PointQuantizer* copy = hooks_.gemm_point(i, static_cast<recipe::Gemm>(g));
      if (!copy) continue;
      quant::PointStats s = copy->step_stats();
      s.merge(copy->column_stats());
      check_thresholds(step, config, warnings, copy->settings(), {hooks_.name(i), recipe::kGemmNames[g], false}, s);
      interval_gemms_[i][g].merge(s);
    }
  }
}

// Exponential amax growth: a least-squares line through log2 amax over the last kAmaxWindow steps
// rising faster than warn_amax_growth binades per 100 steps, with r² ≥ 0.8 so that a trend, not
// noise, is fitted. The window starts empty in each process (a resumed run refills it).
void QuantMetrics::check_amax_growth(std::int64_t step, const config::TrainConfig& config, Warnings& warnings,
                                     std::size_t point, float amax) {
  std::vector<double>& window = log2_amax_[point];
  if (!(amax > 0) || !std::isfinite(amax)) return;
  if (window.size() == kAmaxWindow) window.erase(window.begin());
  window.push_back(std::log2(static_cast<double>(amax)));
  if (window.size() < kAmaxWindow || config.warn_amax_growth <= 0) return;
  const diag::GrowthFit fit = diag::log2_growth(window);
  const double per_100 = 100 * fit.slope;
  if (per_100 > config.warn_amax_growth && fit.r2 >= 0.8) {
    const std::string& name = hooks_.name(point);
    warnings.warn(step, "amax_growth", name, per_100, config.warn_amax_growth,
                  name + "'s amax grows " + short_number(per_100) + " binades per 100 steps over the last " +
                      std::to_string(kAmaxWindow) + " (fit r^2 " + short_number(fit.r2) + ", threshold " +
                      short_number(config.warn_amax_growth) + "): it will outrun the format's range");
  }
}

void QuantMetrics::check_thresholds(std::int64_t step, const config::TrainConfig& config, Warnings& warnings,
                                    const quant::PointSettings& settings, const Where& where,
                                    const quant::PointStats& s) {
  if (s.calls == 0) return;
  // Strings are built only when a warning fires: no allocation on a quiet step.
  const auto key = [&] { return where.copy.empty() ? where.point : where.point + "/" + std::string(where.copy); };
  const auto label = [&] {
    if (where.copy.empty()) return where.point;
    if (where.copy == "colwise") return where.point + "'s column-wise copy";
    return where.point + "'s " + std::string(where.copy) + " copy";
  };
  const auto report = [&](const char* kind, double value, double threshold, const std::string& what) {
    const std::string message = label() + " " + what + " (" + settings.format_name + ", threshold " +
                                short_number(threshold) + "%)";
    if (!where.without_history) {
      warnings.warn(step, kind, key(), value, threshold, message);
      return;
    }
    warnings.start_up(step, "no_history", key(), kind, value,
                      message + " at delayed scaling's first step, whose scale is 1 for want of an amax history");
  };
  const double overflow = percent(s.values.overflow, s.values.count);
  const double underflow = percent(s.values.underflow, s.values.count);
  if (overflow > config.warn_overflow_pct) {
    report("overflow", overflow, config.warn_overflow_pct, "overflows " + short_number(overflow) + "% of its values");
  }
  if (underflow > config.warn_underflow_pct) {
    report("underflow", underflow, config.warn_underflow_pct,
           "flushes " + short_number(underflow) + "% of its values to zero");
  }
}

nlohmann::json QuantMetrics::take() {
  nlohmann::json points = nlohmann::json::object();
  for (std::size_t i = 0; i < hooks_.size(); ++i) {
    const quant::PointStats &rows = interval_[i], &columns = interval_columns_[i];
    auto& gemms = interval_gemms_[i];
    const bool gemm_calls = std::any_of(gemms.begin(), gemms.end(), [](const auto& g) { return g.calls > 0; });
    if (rows.calls == 0 && columns.calls == 0 && !gemm_calls) continue;
    const std::string& name = hooks_.name(i);
    nlohmann::json stats = rows.calls ? stats_json(rows) : nlohmann::json::object();
    if (hooks_.point(i) && hooks_.point(i)->delayed()) {
      stats["scale_changes"] = scale_changes_[i];
      scale_changes_[i] = 0;
    }
    if (columns.calls) {
      stats["colwise"] = stats_json(columns);
    }
    for (std::size_t g = 0; g < recipe::kGemmCount; ++g) {
      if (gemms[g].calls) stats[std::string(recipe::kGemmNames[g])] = stats_json(gemms[g]);
      gemms[g] = quant::PointStats{};
    }
    points[name] = std::move(stats);
    interval_[i] = quant::PointStats{};
    interval_columns_[i] = quant::PointStats{};
  }
  return points;
}

namespace {

class QuantMetricsObserver final : public StepObserver {
 public:
  void begin_phase(const precision::QuantHooks* hooks, const recipe::Recipe& recipe) override {
    metrics_.reset();
    if (recipe.any_enabled()) metrics_.emplace(*hooks);
  }

  void after_clip(RunView& run, StepRecord& step) override {
    if (metrics_) metrics_->add_step(step.done, run.config, run.warnings);
  }

  void after_update(RunView& /*run*/, StepRecord& step) override {
    if (metrics_ && step.plan.logged) step.metrics["quant"] = metrics_->take();
  }

 private:
  std::optional<QuantMetrics> metrics_;  // the current phase's, when it quantizes
};

}  // namespace

std::unique_ptr<StepObserver> quant_metrics_observer() { return std::make_unique<QuantMetricsObserver>(); }

}  // namespace altgrad::monitor
