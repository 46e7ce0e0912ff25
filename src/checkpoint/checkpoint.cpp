#include "checkpoint/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/code_checkpoint.hpp"
#include "checkpoint/state_codes_checkpoint.hpp"
#include "io/atomic_file.hpp"
#include "io/json_integer.hpp"
#include "io/run_directory.hpp"

namespace altgrad::checkpoint {
namespace {

namespace fs = std::filesystem;

using io::run_directory::kModel;
using io::run_directory::kModelConfig;
using io::run_directory::kOptimizer;
using io::run_directory::kState;

[[noreturn]] void fail(const fs::path& path, const std::string& why) { throw io::CheckpointError(path.string() + ": " + why); }

void write_json(const fs::path& path, const nlohmann::json& json) {
  io::write_file_atomically(path, [&](std::ostream& out) { out << json.dump(2) << '\n'; });
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) fail(path, "cannot open (not a checkpoint directory?)");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("not valid JSON: ") + e.what());
  }
  if (!json.is_object()) fail(path, "not a JSON object");
  return json;
}

// Field `key` as an integer of type T, at least `min`: written as an integer, not 2.0 or 1e300.
template <typename T>
T integer_field(const nlohmann::json& object, const fs::path& path, const std::string& key, T min) {
  const auto found = object.find(key);
  if (found == object.end()) fail(path, "missing field '" + key + "'");
  const std::optional<T> value = io::json_integer<T>(*found);
  if (!value || *value < min) {
    fail(path, "field '" + key + "' must be an integer of at least " + std::to_string(min) + ", got " + found->dump());
  }
  return *value;
}

nlohmann::json config_json(const model::GptConfig& c) {
  // nanoGPT's GPTConfig fields first (dropout is always 0 here), then the variants.
  return {{"block_size", c.block_size}, {"vocab_size", c.vocab_size}, {"n_layer", c.n_layer},
          {"n_head", c.n_head},         {"n_embd", c.n_embd},         {"dropout", 0.0},
          {"bias", c.bias},             {"norm", model::to_string(c.norm)},
          {"mlp", model::to_string(c.mlp)}, {"mlp_hidden", model::hidden_size(c)}};
}

std::optional<std::int64_t> step_of(const fs::path& dir) {
  const std::string name = dir.filename().string();
  if (!name.starts_with(io::run_directory::kCheckpointPrefix)) return std::nullopt;
  try {
    std::size_t used = 0;
    const std::int64_t step = std::stoll(name.substr(5), &used);
    if (used != name.size() - 5) return std::nullopt;
    return step;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<std::pair<std::int64_t, fs::path>> list_checkpoints(const fs::path& run_dir) {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  const fs::path dir = run_dir / io::run_directory::kCheckpoints;
  if (!fs::is_directory(dir)) return found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (const auto step = step_of(entry.path()); step && entry.is_directory()) found.emplace_back(*step, entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

const io::Tensor& expect_tensor(const io::SafetensorsFile& file, const fs::path& path, const std::string& name,
                            const std::vector<std::int64_t>& shape) {
  const auto it = file.tensors.find(name);
  if (it == file.tensors.end()) fail(path, "missing tensor '" + name + "'");
  if (it->second.shape != shape) {
    fail(path, "tensor '" + name + "' has shape " + nlohmann::json(it->second.shape).dump() + ", the config needs " +
                   nlohmann::json(shape).dump());
  }
  return it->second;
}

void save_optimizer(const fs::path& path, const optim::Optimizer& optimizer) {
  const std::int64_t n = static_cast<std::int64_t>(optimizer.parameter_count());
  std::vector<io::TensorRef> state;
  for (const auto& tensor : optimizer.state()) state.push_back({tensor.name, {n}, tensor.values});
  std::map<std::string, std::string> metadata = {{"optimizer", std::string(optimizer.name())},
                                                 {"step", std::to_string(optimizer.step_count())}};
  for (const auto& tensor : optimizer.quantized_state()) add_state_codes(tensor, state, metadata);
  io::write_safetensors(path, state, metadata);
}

// Every checkpoint names its optimizer; those written before optimizers were named (early
// development, no published result) are refused rather than read as AdamW's.
std::string saved_optimizer_name(const fs::path& path, const io::SafetensorsFile& file) {
  const auto it = file.metadata.find("optimizer");
  if (it == file.metadata.end()) fail(path, "names no optimizer (its metadata has no \"optimizer\" entry)");
  return it->second;
}

// What `optimizer` keeps, for messages: "exp_avg, exp_avg_sq" or "no state tensors".
std::string state_names(const optim::Optimizer& optimizer) {
  std::string names;
  for (const auto& tensor : optimizer.state()) names += (names.empty() ? "" : ", ") + tensor.name;
  for (const auto& tensor : optimizer.quantized_state()) {
    for (const std::string& stored : state_code_tensor_names(tensor)) names += (names.empty() ? "" : ", ") + stored;
  }
  return names.empty() ? "no state tensors" : names;
}

// Writes model.safetensors: every tensor of nanoGPT's state_dict in F32, except the ones `codes`
// keeps (null: none), which are stored as codes and scales (code_checkpoint.hpp).
void write_model_file(const fs::path& path, const model::Gpt<float>& model, const optim::CodeWeights* codes) {
  std::vector<io::TensorRef> tensors;
  std::map<std::string, std::string> metadata = {{"format", "pt"}};
  for (const auto& spec : model.layout().state_dict()) {
    if (codes && add_code_tensor(spec, *codes, tensors, metadata)) continue;
    tensors.push_back({spec.name, io::safetensors_shape(spec.shape), model.parameter(spec.name)});
  }
  io::write_safetensors(path, tensors, metadata);
}

}  // namespace

fs::path save_checkpoint(const fs::path& run_dir, const model::Gpt<float>& model, const optim::Optimizer& optimizer,
                         const CheckpointState& state, const CheckpointExtras& extras,
                         const optim::CodeWeights* codes) {
  const fs::path final_dir = io::run_directory::checkpoint_dir(run_dir, state.step);
  // A hidden folder beside it until complete: ".step_N.partial".
  std::string staging_name = ".";
  staging_name += final_dir.filename().string();
  staging_name += ".partial";
  const fs::path staging = final_dir.parent_path() / staging_name;
  fs::remove_all(staging);
  fs::create_directories(staging);

  write_model_file(staging / kModel, model, codes);
  save_optimizer(staging / kOptimizer, optimizer);
  write_json(staging / kModelConfig, config_json(model.config()));
  const auto number_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json state_json = {{"step", state.step},
                                {"seed", state.seed},
                                {"val_loss", number_or_null(state.val_loss)},
                                {"best_val_loss", number_or_null(state.best_val_loss)},
                                {"best_step", state.best_step},
                                {"optimizer_step", optimizer.step_count()},
                                {"grad_norm_history", state.grad_norm_history},
                                {"last_loss", number_or_null(state.last_loss)},
                                {"initial_loss", number_or_null(state.initial_loss)}};
  // Only once a diagnostic step has run: the state.json of a run without one stays as it was.
  if (!state.kurtosis_baseline.empty()) state_json["kurtosis_baseline"] = state.kurtosis_baseline;
  write_json(staging / kState, state_json);
  if (extras) extras(staging);
  fs::remove_all(final_dir);
  fs::rename(staging, final_dir);
  return final_dir;
}

void export_model(const fs::path& checkpoint_dir, const fs::path& out_dir) {
  const model::GptConfig config = load_checkpoint_config(checkpoint_dir);
  model::Gpt<float> model(config);
  load_model(checkpoint_dir, model);
  fs::create_directories(out_dir);
  write_model_file(out_dir / kModel, model, nullptr);
  write_json(out_dir / kModelConfig, config_json(config));
}

model::GptConfig load_checkpoint_config(const fs::path& checkpoint_dir) {
  const fs::path path = checkpoint_dir / kModelConfig;
  const nlohmann::json j = read_json(path);
  model::GptConfig c;
  try {
    c.block_size = integer_field<std::size_t>(j, path, "block_size", 0);
    c.vocab_size = integer_field<std::size_t>(j, path, "vocab_size", 0);
    c.n_layer = integer_field<std::size_t>(j, path, "n_layer", 0);
    c.n_head = integer_field<std::size_t>(j, path, "n_head", 0);
    c.n_embd = integer_field<std::size_t>(j, path, "n_embd", 0);
    c.bias = j.at("bias").get<bool>();
    const auto norm = model::parse_norm(j.value("norm", "layernorm"));
    const auto mlp = model::parse_mlp(j.value("mlp", "gelu"));
    if (!norm || !mlp) fail(path, "unknown norm or mlp variant");
    c.norm = *norm;
    c.mlp = *mlp;
    c.mlp_hidden = j.contains("mlp_hidden") ? integer_field<std::size_t>(j, path, "mlp_hidden", 0) : 0;
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("bad or missing field: ") + e.what());
  }
  if (const auto errors = model::config_errors(c); !errors.empty()) fail(path, errors.front());
  return c;
}

std::string model_config_differences(const model::GptConfig& checkpoint, const model::GptConfig& config) {
  const nlohmann::json stored = config_json(checkpoint), wanted = config_json(config);
  std::string differences;
  for (const auto& [key, value] : wanted.items()) {
    if (stored.at(key) == value) continue;
    if (!differences.empty()) differences += "; ";
    differences += key + " " + stored.at(key).dump() + " in the checkpoint, " + value.dump() + " in the config";
  }
  return differences;
}

optim::CodeWeights load_model(const fs::path& checkpoint_dir, model::Gpt<float>& model) {
  const fs::path path = checkpoint_dir / kModel;
  const io::SafetensorsFile file = io::read_safetensors(path);
  const auto tensors = model.layout().tensors();
  optim::CodeWeights stored;
  for (std::size_t range = 0; range < tensors.size(); ++range) {
    const model::TensorSpec& spec = tensors[range];
    const std::span<float> into = model.parameter(spec.name);
    if (std::optional<optim::CodeTensor> codes = read_code_tensor(file, path, spec, range)) {
      for (std::size_t i = 0; i < codes->size; ++i) into[i] = codes->value(i);
      stored.add_stored(std::move(*codes));
      continue;
    }
    const io::Tensor& t = expect_tensor(file, path, spec.name, io::safetensors_shape(spec.shape));
    if (t.dtype != io::Dtype::f32) fail(path, "tensor '" + spec.name + "' must be F32");
    std::copy(t.data.begin(), t.data.end(), into.begin());
  }
  return stored;
}

void check_code_weights(const fs::path& checkpoint_dir, const optim::CodeWeights& stored,
                        const model::ParameterLayout& layout,
                        const std::vector<std::pair<std::size_t, std::string>>& expected) {
  const fs::path path = checkpoint_dir / kModel;
  const auto tensors = layout.tensors();
  for (std::size_t range = 0; range < tensors.size(); ++range) {
    const auto want = std::find_if(expected.begin(), expected.end(), [&](const auto& e) { return e.first == range; });
    const optim::CodeTensor* t = stored.find(range);
    if (want == expected.end()) {
      if (t) fail(path, "tensor '" + tensors[range].name + "' is stored as codes, but the config keeps it in FP32 (master_weights = true?)");
      continue;
    }
    if (!t) fail(path, "tensor '" + tensors[range].name + "' is stored in FP32, but master_weights = false keeps it as codes");
    if (t->format_name != want->second) {
      fail(path, "tensor '" + tensors[range].name + "' holds codes of " + t->format_name + ", the config's grid is " + want->second);
    }
  }
}

void load_optimizer(const fs::path& checkpoint_dir, optim::Optimizer& optimizer, OptimizerLoad purpose) {
  const fs::path path = checkpoint_dir / kOptimizer;
  const io::SafetensorsFile file = io::read_safetensors(path);
  if (const std::string saved = saved_optimizer_name(path, file); saved != optimizer.name()) {
    const std::string remedy = purpose == OptimizerLoad::resume
                                   ? "set optimizer = \"" + saved + "\" to resume this run"
                                   : "set init_optimizer = false to start with fresh optimizer state, or optimizer = \"" +
                                         saved + "\" to carry it";
    fail(path, "written by optimizer '" + saved + "', but the config asks for optimizer '" +
                   std::string(optimizer.name()) + "' (" + remedy + ")");
  }
  // Every check before the first copy, so a refused checkpoint leaves the optimizer untouched.
  const auto kept = optimizer.state();
  for (const auto& tensor : kept) refuse_codes_for_fp32(file, path, tensor.name);
  for (const auto& tensor : optimizer.quantized_state()) check_state_codes(file, path, tensor);
  std::vector<std::string> kept_names;
  for (const auto& tensor : kept) kept_names.push_back(tensor.name);
  for (const auto& tensor : optimizer.quantized_state()) {
    for (std::string& stored : state_code_tensor_names(tensor)) kept_names.push_back(std::move(stored));
  }
  for (const auto& entry : file.tensors) {
    const std::string& name = entry.first;  // not a structured binding: clang before 16 cannot capture one
    if (std::find(kept_names.begin(), kept_names.end(), name) == kept_names.end()) {
      fail(path, "unexpected state tensor '" + name + "': optimizer '" + std::string(optimizer.name()) +
                     "' with this config keeps " + state_names(optimizer));
    }
  }
  const std::int64_t n = static_cast<std::int64_t>(optimizer.parameter_count());
  for (const auto& tensor : kept) expect_tensor(file, path, tensor.name, {n});
  std::int64_t step = -1;
  try {
    step = std::stoll(file.metadata.at("step"));
  } catch (const std::exception&) {
    // step stays -1, refused below with the other bad values
  }
  if (step < 0) fail(path, "missing or bad 'step' metadata");
  for (const auto& tensor : kept) optimizer.restore_state(tensor.name, file.tensors.at(tensor.name).data);
  for (const auto& tensor : optimizer.quantized_state()) {
    const std::string name = tensor.name();  // restore_quantized_state rewrites `tensor`
    optimizer.restore_quantized_state(name, file.tensors.at(name + ".codes").bytes,
                                      file.tensors.at(name + ".scales").data);
  }
  optimizer.restore_step_count(step);
}

CheckpointState load_state(const fs::path& checkpoint_dir) {
  const fs::path path = checkpoint_dir / kState;
  const nlohmann::json j = read_json(path);
  const auto number = [&](const char* key) {
    const auto& v = j.at(key);
    return v.is_null() ? std::nan("") : v.get<double>();
  };
  CheckpointState state;
  try {
    state = {integer_field<std::int64_t>(j, path, "step", 0),
             integer_field<std::uint64_t>(j, path, "seed", 0),
             number("val_loss"),
             // Null until the first evaluation: no loss yet, so any evaluated one is better.
             j.at("best_val_loss").is_null() ? std::numeric_limits<double>::infinity() : number("best_val_loss"),
             integer_field<std::int64_t>(j, path, "best_step", -1),  // -1: never evaluated
             j.at("grad_norm_history").get<std::vector<double>>(),
             number("last_loss"),
             number("initial_loss"),
             {}};
    if (const auto baseline = j.find("kurtosis_baseline"); baseline != j.end()) {
      if (!baseline->is_object()) fail(path, "kurtosis_baseline must be an object of kurtosis values by tensor name");
      state.kurtosis_baseline = baseline->get<std::map<std::string, double>>();
    }
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("bad or missing field: ") + e.what());
  }
  // Gradient norms: what the spike detector's running median is taken over.
  for (const double norm : state.grad_norm_history) {
    if (!std::isfinite(norm) || norm < 0) fail(path, "grad_norm_history holds " + std::to_string(norm) + ", not a norm");
  }
  for (const auto& [name, kurtosis] : state.kurtosis_baseline) {
    if (!std::isfinite(kurtosis) || kurtosis < 0) {
      fail(path, "kurtosis_baseline." + name + " holds " + std::to_string(kurtosis) + ", not a kurtosis");
    }
  }
  return state;
}

fs::path resolve_checkpoint(const fs::path& path) {
  if (fs::exists(path / kModel)) return path;
  const auto found = list_checkpoints(path);
  if (found.empty()) fail(path, "neither a checkpoint (no " + std::string(kModel) + ") nor a run directory with checkpoints");
  return found.back().second;
}

void prune_checkpoints(const fs::path& run_dir, int keep, std::int64_t best_step) {
  if (keep <= 0) return;
  const auto found = list_checkpoints(run_dir);
  const std::size_t cut = found.size() > static_cast<std::size_t>(keep) ? found.size() - keep : 0;
  for (std::size_t i = 0; i < cut; ++i) {
    if (found[i].first != best_step) fs::remove_all(found[i].second);
  }
}

}  // namespace altgrad::checkpoint
