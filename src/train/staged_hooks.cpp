#include "train/staged_hooks.hpp"

namespace altgrad::train {

void StagedHooks::apply(const model::MatmulOperand& operand, std::span<const float> in, std::span<float> out) {
  if (host_->runs_on_device(operand)) {
    host_->apply_on_device(operand, in, out);
    return;
  }
  if (in_.size() < in.size()) in_.resize(in.size());
  if (out_.size() < out.size()) out_.resize(out.size());
  const std::span<float> host_in = std::span<float>(in_).first(in.size());
  const std::span<float> host_out = std::span<float>(out_).first(out.size());
  ops::download(memory_, host_in, in);
  host_->apply(operand, host_in, host_out);
  ops::upload(memory_, out, std::span<const float>(host_out));
}

}  // namespace altgrad::train
