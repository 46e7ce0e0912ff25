#pragma once
// The geometry diagnostics of a diagnostic step (docs/optimizers.md, "Geometry diagnostics"): for
// each tensor that lives on a grid — the matmul weights, and the embeddings a bit-space optimizer
// updates under grid_embeddings — diag::grid_geometry of the optimizer step just taken, written as
// metrics.jsonl's diag.geometry.<tensor> (TensorBoard: diag/geometry/<tensor>/<metric>).
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "model/gpt.hpp"
#include "monitor/scalar_log.hpp"
#include "monitor/step_observer.hpp"
#include "optim/optimizer.hpp"
#include "optim/weight_grid.hpp"

namespace altgrad::monitor {

struct StepGeometryInputs {
  const model::ParameterLayout& layout;
  const optim::Optimizer& optimizer;
  std::span<const optim::WeightGrid> grids;  // per range (= per tensor), as they were before the step
  std::span<const float> before, after;      // the parameters around the step
  std::span<const float> intended;           // the optimizer's intended update, where it rounds its updates
  std::span<const float> grads;              // the gradient it was given (clipped)
};

nlohmann::json step_geometry(const StepGeometryInputs& in);

// Every diag_interval steps: the grids, the weights and the optimizer's intended update kept around
// the optimizer step, then step_geometry into metrics.jsonl's diag.geometry.
std::unique_ptr<StepObserver> step_geometry_observer(const config::TrainConfig& config, std::size_t parameters);

}  // namespace altgrad::monitor
