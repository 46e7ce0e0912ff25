#include "monitor/gradient_flow.hpp"

#include <cmath>
#include <string>

#include "diag/gradient_stats.hpp"
#include "optim/adamw.hpp"

namespace altgrad::monitor {
namespace {

using nlohmann::json;

// The block a parameter tensor belongs to ("transformer.h.3.mlp.c_fc.weight" → 3), or -1.
long block_of(const std::string& name) {
  static const std::string prefix = "transformer.h.";
  if (!name.starts_with(prefix)) return -1;
  return std::stol(name.substr(prefix.size()));
}

}  // namespace

json gradient_norms(const model::Gpt<float>& model, std::int64_t step, const config::TrainConfig& config, Warnings& warnings) {
  json l2 = json::object(), linf = json::object();
  const long top = model.config().n_layer - 1;
  double top_squared = 0.0, bottom_squared = 0.0;
  for (const auto& spec : model.layout().tensors()) {
    if (!spec.alias_of.empty()) continue;
    const std::span<const float> g = spec.slot.in(model.gradients());
    const double squared = diag::squared_l2_norm(g);
    const double largest = diag::max_abs(g);
    l2[spec.name] = std::sqrt(squared);
    linf[spec.name] = largest;
    const long block = block_of(spec.name);
    if (block == top) top_squared += squared;
    if (block == 0) bottom_squared += squared;
  }
  json out = {{"l2", l2}, {"linf", linf}};
  if (top > 0) {
    const double ratio = std::sqrt(top_squared) / std::sqrt(bottom_squared);
    out["layer_ratio"] = ratio;
    if (ratio > config.warn_layer_grad_ratio) {
      warnings.warn(step, "layer_grad_ratio", "", ratio, config.warn_layer_grad_ratio,
                    "the top block's gradient norm is " + short_number(ratio) + " times the bottom block's (threshold " +
                        short_number(config.warn_layer_grad_ratio) + "): the lower blocks barely learn");
    }
  }
  return out;
}

void add_clipping(std::span<const double> recent_norms, std::int64_t step, const config::TrainConfig& config,
                  Warnings& warnings, json& out) {
  std::size_t clipped = 0;
  for (const double norm : recent_norms) clipped += optim::clips(norm, config.grad_clip);
  const bool now = !recent_norms.empty() && optim::clips(recent_norms.back(), config.grad_clip);
  const double rate = recent_norms.empty() ? 0.0 : static_cast<double>(clipped) / static_cast<double>(recent_norms.size());
  out["clipped"] = now;
  out["clip_rate"] = rate;
  const std::int64_t oldest = step - static_cast<std::int64_t>(recent_norms.size()) + 1;
  if (recent_norms.size() >= kClipWarnAfter && oldest > config.warmup_iters && rate > config.warn_clip_rate) {
    warnings.warn(step, "clip_rate", "", rate, config.warn_clip_rate,
                  "gradient clipping fired in " + short_number(100 * rate) + "% of the last " +
                      std::to_string(recent_norms.size()) + " steps (threshold " +
                      short_number(100 * config.warn_clip_rate) + "%): the learning rate may be too high");
  }
}

namespace {

class GradientFlow final : public StepObserver {
 public:
  void after_backward(RunView& run, StepRecord& step) override {
    if (step.plan.logged) step.metrics["grad"] = gradient_norms(run.model, step.done, run.config, run.warnings);
  }
};

}  // namespace

std::unique_ptr<StepObserver> gradient_flow_observer() { return std::make_unique<GradientFlow>(); }

}  // namespace altgrad::monitor
