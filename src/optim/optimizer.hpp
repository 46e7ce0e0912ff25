#pragma once
// The optimizer interface the trainer and checkpoints use, after PyTorch's torch.optim: an
// optimizer updates one contiguous parameter buffer from its gradients, and everything it must
// carry from step to step is a list of named FP32 tensors the size of the buffer (AdamW's
// `exp_avg` and `exp_avg_sq`, SGD's `momentum_buffer`) plus the step count. Checkpoints save and
// restore that list by name without knowing which optimizer holds it, so a new optimizer touches
// neither the training loop nor the checkpoint code. A state tensor may instead be kept as codes
// with per-group scales (optim/quantized_state.hpp: AdamW's low-precision moments); checkpoints
// save and restore those by name too.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "optim/parameter_range.hpp"
#include "optim/quantized_state.hpp"
#include "optim/weight_grid.hpp"

namespace altgrad::optim {

struct StateTensor {
  std::string name;
  std::vector<float> values;  // one per parameter, in the buffer's order
};

// A hyperparameter as written to the run directory's optimizer.json.
struct Hyperparameter {
  std::string name;
  double value;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // The config value that selects this optimizer ("adamw", "sgd"); checkpoints record it so that
  // state saved by one optimizer is never loaded into another.
  virtual std::string_view name() const = 0;
  virtual std::vector<Hyperparameter> hyperparameters() const = 0;

  // One update with learning rate `lr`; increments the step count first, as PyTorch does.
  // Allocates nothing.
  virtual void step(std::span<float> params, std::span<const float> grads, float lr) = 0;

  // The grid range `range`'s weights live on (bit-space optimizers; docs/optimizers.md). The
  // trainer sets each range's grid before every step, since a point's scale changes from step to
  // step; optimizers that do not use grids ignore it.
  virtual bool uses_grids() const { return false; }
  virtual void set_grid(std::size_t /*range*/, const WeightGrid& /*grid*/) {}

  // Where the next steps write the update they intended before rounding it (diagnostics; empty:
  // nowhere). Only optimizers that round the update (gridwalk, madam_int) write it and say so; for
  // the others the intended update is the applied one.
  void record_intended(std::span<float> sink) { intended_ = sink; }
  virtual bool rounds_updates() const { return false; }

  std::int64_t step_count() const { return step_; }
  std::size_t parameter_count() const { return parameter_count_; }
  std::span<const ParameterRange> ranges() const { return ranges_; }

  // The named state, in a fixed order. Empty for an optimizer that keeps none (SGD without momentum).
  std::span<const StateTensor> state() const { return state_; }
  // Overwrites the state tensor `name` (checkpoint resume). Throws std::invalid_argument when the
  // optimizer keeps no tensor of that name or the sizes differ.
  void restore_state(std::string_view name, std::span<const float> values);
  // The state kept as codes and per-group scales, in a fixed order; empty unless configured.
  std::span<const QuantizedState> quantized_state() const { return quantized_; }
  // Overwrites the codes and scales of quantized state tensor `name` (checkpoint resume). Throws
  // std::invalid_argument, naming the tensor, when there is none of that name or
  // QuantizedState::restore refuses them.
  void restore_quantized_state(std::string_view name, std::span<const std::uint8_t> codes, std::span<const float> scales);
  void restore_step_count(std::int64_t step);

 protected:
  Optimizer(std::string_view who, std::size_t parameter_count, std::vector<ParameterRange> ranges);
  // Adds a zero-filled state tensor and returns its index for state_values().
  std::size_t add_state(std::string name);
  std::span<float> state_values(std::size_t index) { return state_[index].values; }
  // Adds a state tensor kept as codes and returns its index for quantized_values().
  std::size_t add_quantized_state(QuantizedState state);
  QuantizedState& quantized_values(std::size_t index) { return quantized_[index]; }
  std::int64_t advance_step() { return ++step_; }
  std::span<float> intended_sink() const { return intended_; }
  void check_step_sizes(std::string_view who, std::size_t params, std::size_t grads) const;

 private:
  std::size_t parameter_count_;
  std::vector<ParameterRange> ranges_;
  std::vector<StateTensor> state_;
  std::vector<QuantizedState> quantized_;
  std::int64_t step_ = 0;
  std::span<float> intended_;
};

}  // namespace altgrad::optim
