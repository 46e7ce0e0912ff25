#pragma once
// A run's passes on a device whose memory the host cannot read (docs/cuda.md, "Training"). The
// run's model stays in host memory as its master copy: the optimizer, the clipping, the observers
// and the checkpoints read and write it exactly as in a CPU run. The replica is the same model in
// the device's memory, which runs every forward and backward pass: before a sequence of passes it
// takes the master's parameters, and afterwards it gives back the gradients those passes summed.
// Its hooked operands are quantized on the device where its quantizer engine covers them, else
// through the host (staged_hooks.hpp).
//
// So a device run is a CPU run with the passes moved: on a backend whose kernels are the CPU's
// (the tests' guarded memory) it gives the CPU run's bits, and on a GPU it differs only where the
// GPU's kernels do (docs/determinism.md, "On the GPU").
#include <cstdint>
#include <optional>
#include <span>

#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "precision/quant_hooks.hpp"
#include "train/passes_device.hpp"
#include "train/staged_hooks.hpp"

namespace altgrad::train {

class DeviceReplica {
 public:
  // A zeroed replica of `master`'s model on `device`, with activations for batches of B sequences
  // of T positions.
  DeviceReplica(const model::Gpt<float>& master, const PassesDevice& device, std::size_t B, std::size_t T,
                model::OperandCopies copies);

  // Room for hooked operands, or none; the activations are remade when it changes.
  void use_copies(model::OperandCopies copies);
  model::OperandCopies copies() const { return acts_.copies; }
  ops::Memory& memory() const { return *model_.backend().memory; }

  // Before a sequence of passes: the master's parameters, and the replica's gradients zeroed.
  void begin(std::span<const float> master_parameters);
  float forward(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                precision::QuantHooks* hooks);
  void backward(precision::QuantHooks* hooks);
  // The gradients the backward passes since begin() (or zero_gradients()) summed, into the
  // master's (host) buffer.
  void gradients_to(std::span<float> master_gradients) const;
  void zero_gradients() { model_.zero_gradients(); }

  // The last pass's activations, copied to the host on the first call after a pass (the observers'
  // diagnostics and the non-finite report read them there). Spans of what the GEMMs read (`used`,
  // `attention_used`) point into this copy or into `master`'s parameters.
  const model::Activations<float>& activations_on_host(const model::Gpt<float>& master);

 private:
  model::Gpt<float> model_;
  model::Activations<float> acts_;
  StagedHooks staged_;
  std::optional<model::Activations<float>> host_acts_;
  bool host_acts_current_ = false;
};

}  // namespace altgrad::train
