#pragma once
// How the gradient flows through the model, at every logged step (docs/quantization.md, "Gradient
// flow"): per parameter tensor its L2 and L∞ norms before clipping, the ratio of the top block's
// gradient norm to the bottom block's, whether this step's clipping fired, and the clipping rate
// over the recent steps. Warnings when more than half of the recent steps clip, and when the
// layer ratio exceeds its threshold.
#include <cstdint>
#include <memory>
#include <span>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "model/gpt.hpp"
#include "monitor/step_observer.hpp"
#include "monitor/warnings.hpp"

namespace altgrad::monitor {

// The clipping rate is taken over the gradient-norm spike detector's history (its last 100 steps),
// which checkpoints save, so that the rate resumes bit for bit. Its warning waits for a window of at
// least kClipWarnAfter steps, all after warmup: early training clips by design (large first
// gradients while the rate warms up), and the research notes' "> 50% clipped" is a steady-state
// rule.
inline constexpr std::size_t kClipWarnAfter = 50;

// {"l2": {tensor: ‖g‖₂}, "linf": {tensor: max |g|}, "layer_ratio": r} of the model's gradients,
// averaged over micro-batches and not yet clipped. layer_ratio is absent for a one-block model.
nlohmann::json gradient_norms(const model::Gpt<float>& model, std::int64_t step, const config::TrainConfig& config,
                              Warnings& warnings);

// Adds "clipped" (this step) and "clip_rate" (the fraction of `recent_norms`, the global norms of
// the last steps with this one last, that clipping scaled) to `out`.
void add_clipping(std::span<const double> recent_norms, std::int64_t step, const config::TrainConfig& config,
                  Warnings& warnings, nlohmann::json& out);

// gradient_norms at every logged step, into metrics.jsonl's "grad". The clipping keys come from
// spike_watch.hpp, which holds the recent norms.
std::unique_ptr<StepObserver> gradient_flow_observer();

}  // namespace altgrad::monitor
