#pragma once
// MatmulHooks for a model whose buffers the host cannot read (a GPU's, docs/cuda.md "Training"),
// over the run's precision::QuantHooks. An operand the device's quantizer engine covers is
// quantized where it lies (QuantHooks::apply_on_device); any other (a profile, a Hadamard
// transform, a code histogram, MX blocks down columns, or every operand where there is no engine)
// is downloaded, handed to the hooks on the host, and its copy uploaded where the kernel reads it.
// Either way the copies and statistics are the host's bits; every other question (active,
// axis_dependent, accumulation, grid) is the hooks'.
#include <span>
#include <vector>

#include "model/matmul_hooks.hpp"
#include "ops/memory.hpp"
#include "precision/quant_hooks.hpp"
#include "quant/engine.hpp"

namespace altgrad::train {

class StagedHooks final : public model::MatmulHooks<float> {
 public:
  // `engine`: the device's quantizer, or null.
  StagedHooks(ops::Memory& memory, quant::Engine* engine) : memory_(memory), engine_(engine) {}

  // The run's hooks for the passes to come; null stages nothing (stage() then returns null).
  model::MatmulHooks<float>* stage(precision::QuantHooks* host) {
    host_ = host;
    if (host != nullptr && engine_ != nullptr) host->use_device(*engine_, memory_);
    return host == nullptr ? nullptr : this;
  }

  bool active(const model::MatmulOperand& operand) override { return host_->active(operand); }
  void apply(const model::MatmulOperand& operand, std::span<const float> in, std::span<float> out) override;
  bool axis_dependent(const model::MatmulOperand& operand) override { return host_->axis_dependent(operand); }
  const format::AccumulatorModel* accumulation(const model::MatmulPoint& matmul, model::Gemm gemm) override {
    return host_->accumulation(matmul, gemm);
  }
  const format::AccumulatorModel* attention_accumulation(std::size_t layer, model::AttentionGemm gemm) override {
    return host_->attention_accumulation(layer, gemm);
  }
  ops::GridOperand grid(const model::MatmulOperand& operand) override { return host_->grid(operand); }

 private:
  ops::Memory& memory_;
  quant::Engine* engine_;
  precision::QuantHooks* host_ = nullptr;
  // An operand staged through the host and its copy there; they grow to the largest in the first step.
  std::vector<float> in_, out_;
};

}  // namespace altgrad::train
