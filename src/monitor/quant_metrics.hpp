#pragma once
// Per-point statistics of the quantization passes, from the passes themselves (no extra read of
// memory): every step they are checked against the overflow and underflow thresholds; at each
// logged step their sums over the steps since the last log go to metrics.jsonl and TensorBoard.
// The error sums behind rel_error are gathered on logged steps only (the trainer's begin_step), so
// the interval's sums are its logged step's and rel_error is of that step alone
// (docs/quantization.md, "Which steps gather what"); no warning reads them.
//
// Per point: overflow_pct and underflow_pct (of the values quantized), zero_in_pct and
// zero_out_pct (exact zeros before and after quantization), non_finite (NaN and Inf
// inputs), amax (largest |x| seen), scale (the last per-tensor scale; null under block scaling),
// rel_error = ‖x − x̂‖ / ‖x‖ over finite inputs of the logged step, and clipped_blocks_pct under
// block scaling.
// Under block scaling a point's column-wise copies (the ones its backward GEMMs block along tokens,
// output features or queries; quant::PointQuantizer::column_stats) have the same statistics of
// their own, under "colwise" in the point's entry, TensorBoard tags "quant/<point>/colwise/<stat>",
// and warnings where "<point>/colwise"; the point's own keys count its row-wise copies. A copy with
// per-GEMM settings (recipe::ResolvedPoint::by_gemm) has its statistics under that GEMM's name
// ("forward", "dgrad", "wgrad"), tags "quant/<point>/<gemm>/<stat>" and warnings where
// "<point>/<gemm>", and is counted there only. Delayed
// points also give scale_changes: the steps of the interval whose recorded amax changed the scale
// (the FP8 counterpart of a loss scaler's adjustment count).
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "monitor/scalar_log.hpp"
#include "monitor/step_observer.hpp"
#include "monitor/warnings.hpp"
#include "quant/point_quantizer.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::monitor {

class QuantMetrics {
 public:
  // The amax-growth warning's window: a fit over this many steps of a point's amax.
  static constexpr std::size_t kAmaxWindow = 100;

  // Starts counting scale changes from the scales the hooks hold now (a resumed run's, from its
  // checkpoint).
  explicit QuantMetrics(const precision::QuantHooks& hooks);

  // After a training step: warns where a point crossed a threshold and adds the step to the interval.
  void add_step(std::int64_t step, const config::TrainConfig& config, Warnings& warnings);

  // The interval's statistics keyed by point name, then a new interval begins.
  nlohmann::json take();

 private:
  // Which copy a warning is about: the point's row-wise copies (copy ""), its column-wise ones
  // ("colwise") or a GEMM's own copy (its name), the warning's where being "<point>/<copy>"; and
  // whether the step had no amax history to take its scale from (delayed scaling's first step: a
  // start-up event, not a warning).
  struct Where {
    const std::string& point;
    std::string_view copy;
    bool without_history;
  };
  void add_gemm_copies(std::int64_t step, const config::TrainConfig& config, Warnings& warnings);
  void check_amax_growth(std::int64_t step, const config::TrainConfig& config, Warnings& warnings, std::size_t point,
                         float amax);
  static void check_thresholds(std::int64_t step, const config::TrainConfig& config, Warnings& warnings,
                               const quant::PointSettings& settings, const Where& where, const quant::PointStats& s);

  const precision::QuantHooks& hooks_;
  std::vector<quant::PointStats> interval_;          // row-wise copies (the only ones under per-tensor scaling)
  std::vector<quant::PointStats> interval_columns_;  // column-wise copies under block scaling
  std::vector<std::array<quant::PointStats, recipe::kGemmCount>> interval_gemms_;  // copies with per-GEMM settings
  // Delayed scaling: each point's scale after the last step seen, and the steps of the interval
  // that changed it.
  std::vector<float> last_scale_;
  std::vector<std::uint64_t> scale_changes_;
  // Each point's log2 amax of its last kAmaxWindow steps, oldest first, for the growth warning.
  std::vector<std::vector<double>> log2_amax_;
};

// QuantMetrics of each phase that quantizes: every step checked after clipping, the interval taken
// at each logged step into metrics.jsonl's "quant".
std::unique_ptr<StepObserver> quant_metrics_observer();

}  // namespace altgrad::monitor
