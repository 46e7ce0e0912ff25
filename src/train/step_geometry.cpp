#include "train/step_geometry.hpp"

#include <cmath>
#include <string>

#include "diag/grid_geometry.hpp"

namespace altgrad::train {
namespace {

bool on_a_grid(const model::TensorSpec& spec, const optim::ParameterRange& range, const optim::Optimizer& optimizer) {
  const bool matmul = spec.role == model::ParameterRole::linear_weight ||
                      spec.role == model::ParameterRole::residual_projection;
  return matmul || (optimizer.uses_grids() && !range.adamw_only);
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

}  // namespace altgrad::train
