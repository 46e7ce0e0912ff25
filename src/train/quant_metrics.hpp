#pragma once
// Per-point statistics of the quantization passes, from the passes themselves (no extra read of
// memory): every step they are checked against the overflow and underflow thresholds; at each
// logged step their sums over the steps since the last log go to metrics.jsonl and TensorBoard.
//
// Per point: overflow_pct and underflow_pct (of the values quantized), non_finite (NaN and Inf
// inputs), amax (largest |x| seen), scale (the last per-tensor scale; null under block scaling),
// rel_error = ‖x − x̂‖ / ‖x‖ over finite inputs, and clipped_blocks_pct under block scaling.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "quant/point_quantizer.hpp"
#include "train/config.hpp"
#include "train/quant_hooks.hpp"
#include "train/scalar_log.hpp"
#include "train/warnings.hpp"

namespace altgrad::train {

class QuantMetrics {
 public:
  explicit QuantMetrics(const QuantHooks& hooks) : hooks_(hooks), interval_(hooks.size()) {}

  // After a training step: warns where a point crossed a threshold and adds the step to the interval.
  void add_step(std::int64_t step, const TrainConfig& config, Warnings& warnings);

  // The interval's statistics keyed by point name (TensorBoard tags "quant/<point>/<stat>" into
  // `scalars`), then a new interval begins.
  nlohmann::json take(ScalarLog& scalars);

 private:
  const QuantHooks& hooks_;
  std::vector<quant::PointStats> interval_;
};

}  // namespace altgrad::train
