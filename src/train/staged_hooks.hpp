#pragma once
// MatmulHooks for a model whose buffers the host cannot read (a GPU's, docs/cuda.md "Training"):
// each hooked operand is downloaded, handed to host hooks (precision::QuantHooks: the CPU's
// quantizer, scaling state and statistics), and the copy they write is uploaded where the kernel
// reads it. The same bits as those hooks on host memory, at the cost of one round trip per hooked
// operand; every other question (active, axis_dependent, accumulation, grid) is the host hooks'.
#include <span>
#include <vector>

#include "model/matmul_hooks.hpp"
#include "ops/memory.hpp"

namespace altgrad::train {

class StagedHooks final : public model::MatmulHooks<float> {
 public:
  explicit StagedHooks(ops::Memory& memory) : memory_(memory) {}

  // The hooks on the host for the passes to come; null stages nothing (stage() then returns null).
  model::MatmulHooks<float>* stage(model::MatmulHooks<float>* host) {
    host_ = host;
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
  model::MatmulHooks<float>* host_ = nullptr;
  // The operand and its copy on the host; they grow to the largest operand in the first step.
  std::vector<float> in_, out_;
};

}  // namespace altgrad::train
