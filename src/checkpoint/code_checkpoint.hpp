#pragma once
// Code-only weights (optim/code_weights.hpp) in a checkpoint's model.safetensors. A tensor kept as
// codes is stored instead of its F32 tensor as
//   <name>.codes   U8 (formats of up to 8 bits) or U16, the tensor's shape
//   <name>.scale   F32, shape [1]: a power of two; the weight is decode(code) / scale
// with metadata "<name>.format" naming its format. The tied lm_head.weight alias is left out when
// wte is kept as codes (`altgrad export` writes it). load_model() decodes such tensors, so eval,
// sample and export see FP32 weights, and returns the codes, which resume keeps.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/safetensors.hpp"
#include "model/parameter_layout.hpp"
#include "optim/code_weights.hpp"

namespace altgrad::checkpoint {

// Adds the stored form of `spec` (codes and scale instead of F32) to a model.safetensors being
// written; false when `codes` holds no tensor at spec's place.
bool add_code_tensor(const model::TensorSpec& spec, const optim::CodeWeights& codes, std::vector<io::TensorRef>& tensors,
                     std::map<std::string, std::string>& metadata);

// The codes of tensor `spec` in a model.safetensors (`path`), for parameter range `range`; nothing
// when the file holds no "<name>.codes". Throws CheckpointError naming the file and tensor when the
// codes, scale or format are missing, malformed or inconsistent.
std::optional<optim::CodeTensor> read_code_tensor(const io::SafetensorsFile& file, const std::filesystem::path& path,
                                                  const model::TensorSpec& spec, std::size_t range);

}  // namespace altgrad::checkpoint
