#include "monitor/spike_watch.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "diag/spike_detectors.hpp"
#include "monitor/gradient_flow.hpp"

namespace altgrad::monitor {
namespace {

class SpikeWatch final : public StepObserver {
 public:
  explicit SpikeWatch(const config::TrainConfig& config)
      : loss_spikes_(config.warn_loss_spike),
        norm_spikes_(diag::GradNormSpikeOptions{config.warn_grad_norm_spike, 100, 10}) {}

  void after_clip(RunView& run, StepRecord& step) override {
    check_loss(run, step);
    check_norm(run, step);
    if (!step.plan.logged) return;
    add_clipping(norm_spikes_.history(), step.done, run.config, run.warnings, step.metrics["grad"]);
  }

  void save(checkpoint::CheckpointState& state) const override {
    state.grad_norm_history = norm_spikes_.history();
    state.last_loss = loss_spikes_.previous().value_or(std::numeric_limits<double>::quiet_NaN());
  }

  void restore(const checkpoint::CheckpointState& state) override {
    norm_spikes_.restore(state.grad_norm_history);
    if (std::isfinite(state.last_loss)) loss_spikes_.restore(state.last_loss);
  }

 private:
  void check_loss(RunView& run, const StepRecord& step) {
    const std::optional<double> previous = loss_spikes_.previous();
    if (!loss_spikes_.observe(step.loss)) return;
    run.warnings.warn(step.done, "loss_spike", "", step.loss / *previous, run.config.warn_loss_spike,
                      "loss spiked from " + std::to_string(*previous) + " to " + std::to_string(step.loss));
  }

  void check_norm(RunView& run, const StepRecord& step) {
    const double median = norm_spikes_.median();
    if (!norm_spikes_.observe(step.grad_norm)) return;
    run.warnings.warn(step.done, "grad_norm_spike", "", step.grad_norm / median, run.config.warn_grad_norm_spike,
                      "gradient norm " + std::to_string(step.grad_norm) + " is " +
                          std::to_string(step.grad_norm / median) + " times its running median");
  }

  diag::LossSpikeDetector loss_spikes_;
  diag::GradNormSpikeDetector norm_spikes_;
};

}  // namespace

std::unique_ptr<StepObserver> spike_watch(const config::TrainConfig& config) {
  return std::make_unique<SpikeWatch>(config);
}

}  // namespace altgrad::monitor
