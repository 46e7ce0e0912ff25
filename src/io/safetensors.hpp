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
#include <utility>
#include <vector>

namespace altgrad::io {

// A malformed, truncated or mismatched checkpoint file; the message names the file and the problem.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The element types checkpoints use: F32 for parameters and state, U8 and U16 for the codes of
// code-only weights (optim/code_weights.hpp).
enum class Dtype { f32, u8, u16 };

// A tensor shape as safetensors headers write it.
inline std::vector<std::int64_t> safetensors_shape(const std::vector<std::size_t>& dims) {
  return {dims.begin(), dims.end()};
}

struct TensorRef {
  TensorRef(std::string name_, std::vector<std::int64_t> shape_, std::span<const float> data_)
      : name(std::move(name_)), shape(std::move(shape_)), data(data_) {}
  TensorRef(std::string name_, std::vector<std::int64_t> shape_, Dtype dtype_, std::span<const std::uint8_t> bytes_)
      : name(std::move(name_)), shape(std::move(shape_)), dtype(dtype_), bytes(bytes_) {}

  std::string name;
  std::vector<std::int64_t> shape;
  std::span<const float> data;  // F32: row-major, size = product of shape
  Dtype dtype = Dtype::f32;
  std::span<const std::uint8_t> bytes;  // U8, U16: the little-endian elements, row-major
};

struct Tensor {
  std::vector<std::int64_t> shape;
  std::vector<float> data;  // F32 tensors
  Dtype dtype = Dtype::f32;
  std::vector<std::uint8_t> bytes;  // U8 and U16 tensors
};

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Writes tensors atomically (see atomic_file.hpp). Throws CheckpointError on a shape/size
// mismatch or a duplicate name, FileError on I/O failure.
void write_safetensors(const std::filesystem::path& path, std::span<const TensorRef> tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Reads a file of F32, U8 and U16 tensors, checking the header, every offset and the file size.
SafetensorsFile read_safetensors(const std::filesystem::path& path);

}  // namespace altgrad::io
