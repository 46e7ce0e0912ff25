#include "checkpoint/code_checkpoint.hpp"

#include <stdexcept>

#include "format/parse.hpp"

namespace altgrad::checkpoint {

bool add_code_tensor(const model::TensorSpec& spec, const optim::CodeWeights& codes, std::vector<io::TensorRef>& tensors,
                     std::map<std::string, std::string>& metadata) {
  const optim::CodeTensor* t = codes.at_offset(spec.slot.offset);
  if (!t || t->size != spec.slot.size) return false;
  if (!spec.alias_of.empty()) return true;  // lm_head.weight: the alias of wte, which is stored once
  const io::Dtype dtype = t->code_bytes() == 1 ? io::Dtype::u8 : io::Dtype::u16;
  tensors.push_back({spec.name + ".codes", io::safetensors_shape(spec.shape), dtype, t->codes});
  tensors.push_back({spec.name + ".scale", {1}, std::span<const float>(&t->scale, 1)});
  metadata[spec.name + ".format"] = t->format_name;
  return true;
}

std::optional<optim::CodeTensor> read_code_tensor(const io::SafetensorsFile& file, const std::filesystem::path& path,
                                                  const model::TensorSpec& spec, std::size_t range) {
  const auto codes = file.tensors.find(spec.name + ".codes");
  if (codes == file.tensors.end()) return std::nullopt;
  const auto bad = [&](const std::string& why) -> io::CheckpointError {
    return io::CheckpointError(path.string() + ": code-only tensor '" + spec.name + "': " + why);
  };
  const auto scale = file.tensors.find(spec.name + ".scale");
  const auto format_name = file.metadata.find(spec.name + ".format");
  if (scale == file.tensors.end() || scale->second.dtype != io::Dtype::f32 || scale->second.data.size() != 1) {
    throw bad("needs a one-element F32 tensor '" + spec.name + ".scale'");
  }
  if (format_name == file.metadata.end()) throw bad("needs metadata '" + spec.name + ".format'");
  if (codes->second.shape != io::safetensors_shape(spec.shape)) throw bad("codes have another shape than the config's tensor");
  optim::CodeTensor t;
  try {
    t.format = format::make_format(format::parse_format(format_name->second));
  } catch (const std::exception& e) {
    throw bad("format \"" + format_name->second + "\" is not a format: " + e.what());
  }
  const io::Dtype expected = t.format.width <= 8 ? io::Dtype::u8 : io::Dtype::u16;
  if (codes->second.dtype != expected) throw bad("codes of " + format_name->second + " must be stored as U" +
                                                 std::to_string(expected == io::Dtype::u8 ? 8 : 16));
  t.range = range;
  t.offset = spec.slot.offset;
  t.size = spec.slot.size;
  t.format_name = format_name->second;
  t.scale = scale->second.data[0];
  t.codes = codes->second.bytes;
  try {
    optim::CodeWeights::check_stored(t);
  } catch (const std::invalid_argument& e) {
    throw bad(e.what());
  }
  return t;
}

}  // namespace altgrad::checkpoint
