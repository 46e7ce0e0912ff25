#include "monitor/step_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "diag/grid_geometry.hpp"

namespace altgrad::monitor {
namespace {

bool on_a_grid(const model::TensorSpec& spec, const optim::ParameterRange& range, const optim::Optimizer& optimizer) {
  return model::is_matmul_weight(spec.role) || (optimizer.uses_grids() && !range.adamw_only);
}

}  // namespace

nlohmann::json step_geometry(const StepGeometryInputs& in) {
  nlohmann::json out = nlohmann::json::object();
  const auto tensors = in.layout.tensors();
  std::vector<float> applied;
  for (std::size_t r = 0; r < tensors.size(); ++r) {
    const auto& spec = tensors[r];
    if (!on_a_grid(spec, in.optimizer.ranges()[r], in.optimizer)) continue;
    const auto before = spec.slot.in(in.before), after = spec.slot.in(in.after);
    std::span<const float> intended = spec.slot.in(in.intended);
    if (!in.optimizer.rounds_updates()) {
      applied.resize(before.size());
      for (std::size_t i = 0; i < before.size(); ++i) applied[i] = after[i] - before[i];
      intended = applied;
    }
    const diag::GridGeometry g = diag::grid_geometry(in.grids[r], before, after, intended, spec.slot.in(in.grads));
    nlohmann::json histogram = nlohmann::json::object();
    for (const auto& [bucket, count] : g.log2_stiffness) histogram[std::to_string(bucket)] = count;
    out[spec.name] = {{"update_underflow", g.update_underflow}, {"update_success", g.update_success},
                      {"delta_code", g.delta_code},             {"misalignment", g.misalignment},
                      {"capacity", g.capacity},                 {"alignment", g.alignment},
                      {"stiffness_entropy", g.stiffness_entropy}, {"log2_stiffness", histogram},
                      {"delta_code_mean", g.delta_code_mean},   {"delta_code_variance", g.delta_code_variance},
                      {"grad_stiffness_correlation", g.grad_stiffness_correlation}};
  }
  return out;
}

namespace {

class StepGeometry final : public StepObserver {
 public:
  StepGeometry(const config::TrainConfig& config, std::size_t parameters)
      : config_(config), before_(parameters), intended_(parameters) {}

  void plan(std::int64_t done, StepPlan& plan) const override { plan.logged |= due(done); }

  void before_update(RunView& run, StepRecord& step) override {
    if (!due(step.done)) return;
    const std::span<const float> params = run.model.parameters();
    grids_before_.clear();
    for (std::size_t r = 0; r < run.grids.size(); ++r) grids_before_.push_back(run.grids.grid_at(r, run.hooks, params));
    std::copy(params.begin(), params.end(), before_.begin());
    run.optimizer.record_intended(intended_);
  }

  void after_update(RunView& run, StepRecord& step) override {
    if (!due(step.done)) return;
    run.optimizer.record_intended({});
    step.diag()["geometry"] = step_geometry({run.model.layout(), run.optimizer, grids_before_, before_,
                                             run.model.parameters(), intended_, run.model.gradients()});
  }

 private:
  bool due(std::int64_t done) const { return done % config_.diag_interval == 0; }

  const config::TrainConfig& config_;
  std::vector<optim::WeightGrid> grids_before_;
  std::vector<float> before_, intended_;
};

}  // namespace

std::unique_ptr<StepObserver> step_geometry_observer(const config::TrainConfig& config, std::size_t parameters) {
  return std::make_unique<StepGeometry>(config, parameters);
}

}  // namespace altgrad::monitor
