#pragma once
// The safetensors file format (https://huggingface.co/docs/safetensors): an 8-byte little-endian
// header length, a JSON header mapping tensor names to dtype, shape and byte offsets, then the raw
// tensor bytes. Checkpoints use it so that PyTorch, nanoGPT and other tools can open them.
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace altgrad::train {

// A malformed, truncated or mismatched checkpoint file; the message names the file and the problem.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TensorRef {
  std::string name;
  std::vector<std::int64_t> shape;
  std::span<const float> data;  // row-major, size = product of shape
};

struct Tensor {
  std::vector<std::int64_t> shape;
  std::vector<float> data;
};

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Writes F32 tensors atomically (see atomic_file.hpp). Throws CheckpointError on a shape/size
// mismatch or a duplicate name, FileError on I/O failure.
void write_safetensors(const std::filesystem::path& path, std::span<const TensorRef> tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Reads a file of F32 tensors, checking the header, every offset and the file size.
SafetensorsFile read_safetensors(const std::filesystem::path& path);

}  // namespace altgrad::train
