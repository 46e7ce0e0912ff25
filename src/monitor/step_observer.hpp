#pragma once
// The training step in three parts: compute (the trainer's forward, backward, clipping and update),
// observe (the monitors below) and persist (the trainer's metrics line, evaluation, checkpoints).
//
// A monitor is a StepObserver: it keeps its own interval and state and hooks into the stages of
// the step it needs. A new metric is a new observer in its own file, added to the list in
// step_observers.cpp; the trainer's loop does not change. Observers run in that list's order
// within each stage, which fixes the order of their warnings in events.jsonl.
//
// The stages of one step, in order (a schedule's phases are another thing: begin_phase below):
//   plan            which step this is for the observer: a metrics line, point details
//   before_step     before the step's clock starts (tokens_per_s stays the training step's rate)
//   before_forward  inside the clock, before the step's forward pass
//   after_backward  gradients averaged over micro-batches, not yet clipped
//   after_clip      gradients clipped; the step's loss and global norm known
//   before_update   the weight grids set for this step, the optimizer not yet stepped
//   after_update    the optimizer stepped
#include <cstdint>
#include <functional>
#include <limits>
#include <span>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint.hpp"
#include "config/config.hpp"
#include "recipe/recipe.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "monitor/scalar_log.hpp"
#include "monitor/warnings.hpp"
#include "optim/optimizer.hpp"
#include "precision/quant_hooks.hpp"
#include "precision/weight_grids.hpp"

namespace altgrad::monitor {

// What a step does beyond training, decided before it starts.
struct StepPlan {
  bool logged = false;         // writes a metrics line
  bool point_details = false;  // quantization points record code histograms and value profiles
};

// What the observers see of the run. `unquantized_gradient` writes the gradient of this step's
// batch without quantization, at the current parameters; it touches no quantization state, and the
// step's own forward and backward overwrite whatever else it changes.
struct RunView {
  const config::TrainConfig& config;
  model::Gpt<float>& model;
  // The last pass's activations, on the host (a device run copies them there at the first call).
  std::function<const model::Activations<float>&()> activations;
  const precision::QuantHooks* hooks;  // null when nothing is quantized or profiled
  optim::Optimizer& optimizer;
  const precision::WeightGrids& grids;
  Warnings& warnings;
  std::function<void(std::span<float>)> unquantized_gradient;
};

// One step as the observers fill it in.
struct StepRecord {
  std::int64_t step = 0;  // the step in progress, from 0
  std::int64_t done = 0;  // step + 1: the update it makes, as metrics.jsonl counts steps
  StepPlan plan;
  double loss = std::numeric_limits<double>::quiet_NaN();       // from after_backward on
  double grad_norm = std::numeric_limits<double>::quiet_NaN();  // from after_clip on: before clipping
  nlohmann::json metrics = nlohmann::json::object();           // the step's metrics line, when logged
  ScalarLog scalars;                                            // TensorBoard histograms of the line

  // metrics.jsonl's "diag" object of this step.
  nlohmann::json& diag() { return metrics["diag"]; }
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;

  virtual void plan(std::int64_t /*done*/, StepPlan& /*plan*/) const {}
  // At the start of the run and of each phase of a precision schedule, with that phase's hooks.
  virtual void begin_phase(const precision::QuantHooks* /*hooks*/, const recipe::Recipe& /*recipe*/) {}
  virtual void before_step(RunView& /*run*/, StepRecord& /*step*/) {}
  virtual void before_forward(RunView& /*run*/, StepRecord& /*step*/) {}
  virtual void after_backward(RunView& /*run*/, StepRecord& /*step*/) {}
  virtual void after_clip(RunView& /*run*/, StepRecord& /*step*/) {}
  virtual void before_update(RunView& /*run*/, StepRecord& /*step*/) {}
  virtual void after_update(RunView& /*run*/, StepRecord& /*step*/) {}

  // An observer whose state must resume bit for bit keeps it in the checkpoint's state.json: save()
  // before each checkpoint is written, restore() when a run resumes from one.
  virtual void save(checkpoint::CheckpointState& /*state*/) const {}
  virtual void restore(const checkpoint::CheckpointState& /*state*/) {}
};

}  // namespace altgrad::monitor
