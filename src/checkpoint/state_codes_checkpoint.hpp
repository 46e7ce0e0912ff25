#pragma once
// Optimizer state kept as codes (optim/quantized_state.hpp: AdamW's low-precision moments) in a
// checkpoint's optimizer.safetensors. A state tensor <name> kept so is stored instead of its F32
// tensor as
//   <name>.codes    U8 (formats of up to 8 bits) or U16, shape [parameters]: the codes as they are
//   <name>.scales   F32, shape [groups]: one scale per group, in the order of the parameter ranges
// with metadata "<name>.format" (the format's canonical name) and "<name>.group" (the group size):
// the element's value is decode(code) · scale of its group. Nothing is decoded or re-rounded on the
// way, so a resumed run continues from the very bits it stopped at.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "io/safetensors.hpp"
#include "optim/quantized_state.hpp"

namespace altgrad::checkpoint {

// Adds the stored form of `state` to an optimizer.safetensors being written.
void add_state_codes(const optim::QuantizedState& state, std::vector<io::TensorRef>& tensors,
                     std::map<std::string, std::string>& metadata);

// The two tensor names `state` is stored under.
std::vector<std::string> state_code_tensor_names(const optim::QuantizedState& state);

// Checks that `file` (at `path`) stores `state` as codes of the same format and group size, with
// valid codes and scales, and returns nothing; throws CheckpointError naming the file and tensor
// otherwise, with a remedy when the checkpoint keeps the tensor in FP32.
void check_state_codes(const io::SafetensorsFile& file, const std::filesystem::path& path,
                       const optim::QuantizedState& state);

// Where a checkpoint keeps F32 tensor `name` as codes but the optimizer wants FP32: the refusal.
// Does nothing when the file holds no "<name>.codes".
void refuse_codes_for_fp32(const io::SafetensorsFile& file, const std::filesystem::path& path, const std::string& name);

}  // namespace altgrad::checkpoint
