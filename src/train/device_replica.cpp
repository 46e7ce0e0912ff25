#include "train/device_replica.hpp"

#include <cstdint>

namespace altgrad::train {
namespace {

// `view` moved from the device buffer `from` to the host buffer `to` at the same offset; false,
// unmoved, where it lies outside `from`.
bool moved(std::span<const float>& view, std::span<const float> from, std::span<const float> to) {
  const auto begin = reinterpret_cast<std::uintptr_t>(from.data());
  const auto at = reinterpret_cast<std::uintptr_t>(view.data());
  if (view.empty() || at < begin || at + view.size_bytes() > begin + from.size_bytes()) return false;
  view = to.subspan((at - begin) / sizeof(float), view.size());
  return true;
}

// A span of what a GEMM read, as the host copy holds it: in the activations, or in the master's
// parameters (a weight its hook did not copy).
void to_host(std::span<const float>& view, const model::Activations<float>& device,
             const model::Activations<float>& host, const model::Gpt<float>& replica,
             const model::Gpt<float>& master) {
  if (moved(view, device.storage.span(), host.storage.span())) return;
  if (moved(view, replica.parameters(), master.parameters())) return;
  view = {};
}

}  // namespace

DeviceReplica::DeviceReplica(const model::Gpt<float>& master, const PassesDevice& device, std::size_t B,
                             std::size_t T, model::OperandCopies copies)
    : model_(master.config(), device.backend),
      acts_(master.config(), B, T, copies, *device.backend.memory),
      staged_(*device.backend.memory, device.quantizer) {}

void DeviceReplica::use_copies(model::OperandCopies copies) {
  if (acts_.copies == copies) return;
  acts_ = model::Activations<float>(model_.config(), acts_.B, acts_.T, copies, *model_.backend().memory);
  host_acts_.reset();
  host_acts_current_ = false;
}

void DeviceReplica::begin(std::span<const float> master_parameters) {
  ops::upload(*model_.backend().memory, model_.parameters(), master_parameters);
  model_.zero_gradients();
}

float DeviceReplica::forward(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                             precision::QuantHooks* hooks) {
  host_acts_current_ = false;
  return model::gpt_forward(model_, acts_, tokens, targets, staged_.stage(hooks));
}

void DeviceReplica::backward(precision::QuantHooks* hooks) {
  host_acts_current_ = false;
  model::gpt_backward(model_, acts_, staged_.stage(hooks));
}

void DeviceReplica::gradients_to(std::span<float> master_gradients) const {
  ops::download(*model_.backend().memory, master_gradients, model_.gradients());
}

const model::Activations<float>& DeviceReplica::activations_on_host(const model::Gpt<float>& master) {
  if (host_acts_current_) return *host_acts_;
  if (!host_acts_) host_acts_.emplace(model_.config(), acts_.B, acts_.T, acts_.copies);
  model::Activations<float>& host = *host_acts_;
  ops::Memory& memory = *model_.backend().memory;
  ops::download(memory, host.storage.span(), std::span<const float>(acts_.storage.span()));
  ops::download(memory, host.tokens.span(), std::span<const std::int32_t>(acts_.tokens.span()));
  ops::download(memory, host.targets.span(), std::span<const std::int32_t>(acts_.targets.span()));
  host.has_targets = acts_.has_targets;
  host.mean_loss = acts_.mean_loss;
  host.host_rows = acts_.host_rows;
  for (std::size_t l = 0; l < host.layers.size(); ++l) {
    model::LayerActivations<float>& layer = host.layers[l];
    layer.used = acts_.layers[l].used;
    for (model::LinearInputs<float>& inputs : layer.used) {
      for (std::span<const float>* view : {&inputs.inp, &inputs.weight, &inputs.inp_source, &inputs.weight_source}) {
        to_host(*view, acts_, host, model_, master);
      }
    }
    layer.attention_used = acts_.layers[l].attention_used;
    to_host(layer.attention_used.qkv, acts_, host, model_, master);
    to_host(layer.attention_used.probs, acts_, host, model_, master);
  }
  host.lm_head_used = acts_.lm_head_used;
  for (std::span<const float>* view : {&host.lm_head_used.inp, &host.lm_head_used.weight,
                                       &host.lm_head_used.inp_source, &host.lm_head_used.weight_source}) {
    to_host(*view, acts_, host, model_, master);
  }
  host_acts_current_ = true;
  return host;
}

}  // namespace altgrad::train
