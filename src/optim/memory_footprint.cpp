#include "optim/memory_footprint.hpp"

namespace altgrad::optim {

std::size_t MemoryFootprint::state_bytes() const {
  std::size_t sum = 0;
  for (const StateBytes& s : state) sum += s.bytes;
  return sum;
}

MemoryFootprint memory_footprint(const Optimizer& optimizer, const CodeWeights* codes) {
  MemoryFootprint m;
  m.code_weights = codes ? codes->elements() : 0;
  m.weight_bytes = (optimizer.parameter_count() - m.code_weights) * sizeof(float) + (codes ? codes->bytes() : 0);
  m.decoded_weight_bytes = m.code_weights * sizeof(float);
  for (const StateTensor& t : optimizer.state()) m.state.push_back({t.name, t.values.size() * sizeof(float)});
  for (const QuantizedState& t : optimizer.quantized_state()) m.state.push_back({t.name(), t.bytes()});
  return m;
}

std::string describe(const MemoryFootprint& memory, std::size_t parameters) {
  std::string names;
  for (const StateBytes& s : memory.state) names += (names.empty() ? "" : ", ") + s.name;
  if (names.empty()) names = "none";
  const std::string codes = memory.code_weights == 0 ? ""
                            : " (" + std::to_string(memory.code_weights) + " of them as codes)";
  return std::to_string(parameters) + " parameters" + codes + ": weights " + std::to_string(memory.weight_bytes) + " B + state " +
         std::to_string(memory.state_bytes()) + " B (" + names + ") = " + std::to_string(memory.total_bytes()) + " B";
}

}  // namespace altgrad::optim
