#include "checkpoint/state_codes_checkpoint.hpp"

#include <stdexcept>

#include "format/parse.hpp"

namespace altgrad::checkpoint {
namespace {

io::Dtype code_dtype(const optim::QuantizedState& state) {
  return state.code_bytes() == 1 ? io::Dtype::u8 : io::Dtype::u16;
}

std::string metadata_of(const io::SafetensorsFile& file, const std::string& key) {
  const auto found = file.metadata.find(key);
  return found == file.metadata.end() ? std::string() : found->second;
}

// A refusal naming the file and the state tensor.
[[noreturn]] void refuse_state(const std::filesystem::path& path, const std::string& name, const std::string& why) {
  throw io::CheckpointError(path.string() + ": state tensor '" + name + "' " + why);
}

// The format the checkpoint names for `name`.
format::FormatSpec stored_format(const io::SafetensorsFile& file, const std::filesystem::path& path,
                                 const std::string& name) {
  const std::string text = metadata_of(file, name + ".format");
  if (text.empty()) refuse_state(path, name, "needs metadata '" + name + ".format'");
  try {
    return format::parse_format(text);
  } catch (const std::exception& e) {
    refuse_state(path, name, "names format \"" + text + "\", which is not a format: " + e.what());
  }
}

// The stored tensors' names, types and shapes, and the format and group they were written with.
void check_layout(const io::SafetensorsFile& file, const std::filesystem::path& path,
                  const optim::QuantizedState& state) {
  const std::string& name = state.name();
  const auto codes = file.tensors.find(name + ".codes");
  const auto scales = file.tensors.find(name + ".scales");
  if (codes == file.tensors.end() || scales == file.tensors.end()) {
    refuse_state(path, name, "is missing: no '" + name + ".codes' and '" + name + ".scales'");
  }
  const format::FormatSpec spec = stored_format(file, path, name);
  if (!(spec == state.format().spec)) {
    refuse_state(path, name, "is stored as " + format::format_name(spec) + " codes, but this config keeps it as " +
                                 state.format_name() + " codes");
  }
  const std::string group = metadata_of(file, name + ".group");
  const std::string wanted = std::to_string(state.groups().group_size());
  if (group != wanted) {
    refuse_state(path, name, "is stored in groups of " + (group.empty() ? "(no '" + name + ".group' metadata)" : group) +
                                 ", but this config's adam_state_group is " + wanted);
  }
  const std::vector<std::int64_t> shape = {static_cast<std::int64_t>(state.size())};
  if (codes->second.dtype != code_dtype(state) || codes->second.shape != shape) {
    refuse_state(path, name, "needs codes of type U" + std::string(state.code_bytes() == 1 ? "8" : "16") +
                                 " and shape [" + std::to_string(state.size()) + "]");
  }
  if (scales->second.dtype != io::Dtype::f32) refuse_state(path, name, "needs F32 scales");
}

}  // namespace

void add_state_codes(const optim::QuantizedState& state, std::vector<io::TensorRef>& tensors,
                     std::map<std::string, std::string>& metadata) {
  const auto n = static_cast<std::int64_t>(state.size());
  const auto groups = static_cast<std::int64_t>(state.scales().size());
  tensors.push_back({state.name() + ".codes", {n}, code_dtype(state), state.code_data()});
  tensors.push_back({state.name() + ".scales", {groups}, state.scales()});
  metadata[state.name() + ".format"] = state.format_name();
  metadata[state.name() + ".group"] = std::to_string(state.groups().group_size());
}

std::vector<std::string> state_code_tensor_names(const optim::QuantizedState& state) {
  return {state.name() + ".codes", state.name() + ".scales"};
}

void check_state_codes(const io::SafetensorsFile& file, const std::filesystem::path& path,
                       const optim::QuantizedState& state) {
  const std::string& name = state.name();
  if (file.tensors.contains(name)) {
    refuse_state(path, name, "is stored in FP32, but this config keeps it as " + state.format_name() +
                                 " codes (adam_m_format, adam_v_format): resume with \"fp32\" for it, or " +
                                 "warm-start with init_optimizer = false");
  }
  check_layout(file, path, state);
  optim::QuantizedState probe = state;  // restore() checks every code and scale; the optimizer's copy stays as it is
  try {
    probe.restore(file.tensors.at(name + ".codes").bytes, file.tensors.at(name + ".scales").data);
  } catch (const std::invalid_argument& e) {
    refuse_state(path, name, std::string("is refused: ") + e.what());
  }
}

void refuse_codes_for_fp32(const io::SafetensorsFile& file, const std::filesystem::path& path, const std::string& name) {
  if (!file.tensors.contains(name + ".codes")) return;
  refuse_state(path, name, "is stored as " + metadata_of(file, name + ".format") + " codes, but this config keeps " +
                               "it in FP32: resume with the checkpoint's adam_m_format / adam_v_format, or " +
                               "warm-start with init_optimizer = false");
}

}  // namespace altgrad::checkpoint
