#include "monitor/hadamard_metrics.hpp"

#include <cmath>
#include <string>

namespace altgrad::monitor {
namespace {

nlohmann::json finite_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

nlohmann::json hadamard_json(const precision::HadamardStats& s) {
  nlohmann::json stats = {{"amax_before", s.amax_before},
                          {"amax_after", s.amax_after},
                          {"kurtosis_before", finite_or_null(s.kurtosis_before())},
                          {"kurtosis_after", finite_or_null(s.kurtosis_after())}};
  if (s.quantized) stats["rel_error"] = s.relative_error();
  return stats;
}

class HadamardMetricsObserver final : public StepObserver {
 public:
  void begin_phase(const precision::QuantHooks* hooks, const recipe::Recipe& recipe) override {
    hooks_ = hooks != nullptr && recipe.hadamard.any() ? hooks : nullptr;
  }

  void after_update(RunView& /*run*/, StepRecord& step) override {
    if (hooks_ == nullptr || !step.plan.logged) return;
    nlohmann::json& quant = step.metrics["quant"];
    const nlohmann::json points = hadamard_metrics(*hooks_);  // named: items() of a temporary would dangle
    for (const auto& [point, gemms] : points.items()) quant[point]["hadamard"] = gemms;
  }

 private:
  const precision::QuantHooks* hooks_ = nullptr;  // the current phase's, when it transforms
};

}  // namespace

nlohmann::json hadamard_metrics(const precision::QuantHooks& hooks) {
  nlohmann::json points = nlohmann::json::object();
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    for (std::size_t g = 0; g < recipe::kGemmCount; ++g) {
      const precision::HadamardStats* stats = hooks.hadamard_stats(i, static_cast<recipe::Gemm>(g));
      if (stats == nullptr) continue;
      points[hooks.name(i)][std::string(recipe::kGemmNames[g])] = hadamard_json(*stats);
    }
  }
  return points;
}

std::unique_ptr<StepObserver> hadamard_metrics_observer() { return std::make_unique<HadamardMetricsObserver>(); }

}  // namespace altgrad::monitor
