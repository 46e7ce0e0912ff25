#include "monitor/hessian_probe.hpp"

#include "diag/hessian_power_iteration.hpp"
#include "format/philox_key.hpp"

namespace altgrad::monitor {
namespace {

class HessianProbe final : public StepObserver {
 public:
  HessianProbe(const config::TrainConfig& config, std::size_t parameters) : config_(config), iteration_(parameters) {}

  void plan(std::int64_t done, StepPlan& plan) const override { plan.logged |= due(done); }

  void before_step(RunView& run, StepRecord& step) override {
    if (!due(step.done)) return;
    const diag::HessianOptions options{config_.hessian_epsilon, config_.hessian_iterations,
                                       format::philox_key(config_.seed, format::RandomPurpose::hessian_probe),
                                       static_cast<std::uint64_t>(step.step)};
    const diag::HessianEstimate h = iteration_.estimate(run.model.parameters(), run.unquantized_gradient, options);
    step.diag()["hessian"] = {{"top_eigenvalue", h.eigenvalue}, {"residual", h.residual}, {"iterations", h.iterations}};
  }

 private:
  bool due(std::int64_t done) const { return done % config_.hessian_interval == 0; }

  const config::TrainConfig& config_;
  diag::HessianPowerIteration iteration_;
};

}  // namespace

std::unique_ptr<StepObserver> hessian_probe(const config::TrainConfig& config, std::size_t parameters) {
  return std::make_unique<HessianProbe>(config, parameters);
}

}  // namespace altgrad::monitor
