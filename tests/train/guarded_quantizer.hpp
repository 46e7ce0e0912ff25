#pragma once
// The quantizer engine (quant/engine.hpp) of the tests' guarded backend (model/guarded_backend.hpp):
// the host's quantizer, run with the guarded memory open, as a GPU's runs in its own memory. A
// caller that reads or writes an operand anywhere else dies with SIGSEGV.
#include "model/guarded_backend.hpp"
#include "quant/engine.hpp"
#include "quant/mx.hpp"
#include "quant/quantize.hpp"
#include "quant/scaling.hpp"

namespace altgrad::train_test {

class GuardedQuantizer final : public quant::Engine {
 public:
  explicit GuardedQuantizer(model_test::GuardedMemory& memory) : memory_(memory) {}

  float amax(std::span<const float> x) override {
    const model_test::GuardedMemory::Open open(memory_);
    return quant::amax_of(x);
  }
  quant::QuantStats quantize(const format::Format& f, std::span<const float> in, std::span<float> out,
                             const quant::QuantizeOptions& options) override {
    const model_test::GuardedMemory::Open open(memory_);
    return quant::quantize(f, in, out, options);
  }
  quant::MxStats quantize_mx(const format::Format& element, std::span<const float> in, std::span<float> out,
                             std::size_t row_length, const quant::MxOptions& options) override {
    const model_test::GuardedMemory::Open open(memory_);
    return quant::quantize_mx(element, in, out, row_length, options);
  }

 private:
  model_test::GuardedMemory& memory_;
};

}  // namespace altgrad::train_test
