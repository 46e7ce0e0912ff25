// Checkpoint directories: the input's "@@ name" sections (fuzz_support.hpp) are the files of one
// checkpoint (config.json, model.safetensors with F32 tensors or code-only ones, optimizer.safetensors,
// state.json, recipe.json, quant.safetensors). Loading it as `train --resume` does either throws CheckpointError naming one
// of those files, or gives a model, optimizer, state and recipe that save_checkpoint writes, that
// load again to the same values, and that save again to the same bytes.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/quant_checkpoint.hpp"
#include "fuzz_support.hpp"
#include "model/gpt.hpp"
#include "optim/make_optimizer.hpp"
#include "precision/quant_hooks.hpp"

using namespace altgrad;
namespace fs = std::filesystem;

namespace {

constexpr const char* kFiles[] = {"config.json",  "model.safetensors", "optimizer.safetensors",
                                  "state.json",   "recipe.json",       "quant.safetensors"};

// A harness limit on memory per input (the reader itself accepts any model the config rules allow).
constexpr double kMaxParameters = 1 << 21;

struct Loaded {
  model::GptConfig config;
  std::unique_ptr<model::Gpt<float>> model;
  std::unique_ptr<optim::Optimizer> optimizer;
  checkpoint::CheckpointState state;
  std::optional<recipe::Recipe> recipe;
  std::optional<precision::QuantHooks> hooks;
  optim::CodeWeights codes;
};

double parameter_estimate(const model::GptConfig& c) {
  const double embd = static_cast<double>(c.n_embd), hidden = static_cast<double>(model::mlp_inner_size(c));
  return static_cast<double>(c.n_layer) * (4 * embd * embd + 2 * embd * hidden + 8 * embd) +
         (static_cast<double>(c.vocab_size) + static_cast<double>(c.block_size)) * embd;
}

// The optimizer kind a checkpoint's optimizer file names (as a user sets `optimizer` to resume);
// AdamW for a name no optimizer has, which load_optimizer then refuses.
optim::OptimizerKind saved_kind(const fs::path& dir) {
  const auto metadata = io::read_safetensors(dir / "optimizer.safetensors").metadata;
  const auto it = metadata.find("optimizer");
  for (std::size_t k = 0; it != metadata.end() && k < optim::kOptimizerNames.size(); ++k) {
    if (it->second == optim::kOptimizerNames[k]) return static_cast<optim::OptimizerKind>(k);
  }
  return optim::OptimizerKind::adamw;
}

void check_state_rules(const checkpoint::CheckpointState& s) {
  if (s.step < 0 || s.best_step < -1) fuzz::fail("loaded a negative step");
  for (const double g : s.grad_norm_history) {
    if (!std::isfinite(g) || g < 0) fuzz::fail("loaded a gradient norm that is negative or not finite");
  }
}

std::unique_ptr<Loaded> load(const fs::path& dir) {
  auto l = std::make_unique<Loaded>();
  l->config = checkpoint::load_checkpoint_config(dir);
  if (parameter_estimate(l->config) > kMaxParameters) return nullptr;
  // The small files first, so that short inputs reach each reader.
  l->state = checkpoint::load_state(dir);
  check_state_rules(l->state);
  l->recipe = checkpoint::load_checkpoint_recipe(dir, model::MatmulPoints(l->config));
  l->model = std::make_unique<model::Gpt<float>>(l->config);
  l->codes = checkpoint::load_model(dir, *l->model);
  optim::OptimizerSpec spec;
  spec.kind = saved_kind(dir);
  const std::size_t n = l->model->layout().size();
  l->optimizer = optim::make_optimizer(spec, n, {optim::ParameterRange{0, n, true}});
  checkpoint::load_optimizer(dir, *l->optimizer);
  if (l->recipe && l->recipe->any_enabled()) {
    l->hooks.emplace(l->model->matmuls(), *l->recipe);
    checkpoint::load_quant_state(dir, *l->hooks);
  }
  return l;
}

fs::path save(const fs::path& run_dir, const Loaded& l) {
  return checkpoint::save_checkpoint(run_dir, *l.model, *l.optimizer, l.state, [&](const fs::path& staging) {
    if (l.recipe) checkpoint::save_quant_state(staging, *l.recipe, l.hooks ? &*l.hooks : nullptr);
  }, &l.codes);
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// The same model: mlp_hidden = 0 (the default width, as an older config.json may say by leaving the
// field out) and the width it stands for are one config.
bool same_model(model::GptConfig a, model::GptConfig b) {
  a.mlp_hidden = model::hidden_size(a);
  b.mlp_hidden = model::hidden_size(b);
  return a == b;
}

void check_same(const Loaded& a, const Loaded& b) {
  if (!same_model(a.config, b.config) || !same_bits(a.model->parameters(), b.model->parameters())) {
    fuzz::fail("the re-saved model loads back different");
  }
  const auto ca = a.codes.tensors(), cb = b.codes.tensors();
  if (ca.size() != cb.size()) fuzz::fail("code-only tensors differ");
  for (std::size_t i = 0; i < ca.size(); ++i) {
    if (ca[i].range != cb[i].range || ca[i].format_name != cb[i].format_name || ca[i].codes != cb[i].codes ||
        !same_bits({&ca[i].scale, 1}, {&cb[i].scale, 1})) {
      fuzz::fail("code-only tensor " + std::to_string(ca[i].range) + " loads back different");
    }
  }
  const auto sa = a.optimizer->state(), sb = b.optimizer->state();
  if (a.optimizer->step_count() != b.optimizer->step_count() || sa.size() != sb.size()) fuzz::fail("optimizer differs");
  for (std::size_t i = 0; i < sa.size(); ++i) {
    if (sa[i].name != sb[i].name || !same_bits(sa[i].values, sb[i].values)) fuzz::fail("optimizer state differs");
  }
  const checkpoint::CheckpointState &x = a.state, &y = b.state;
  if (x.step != y.step || x.seed != y.seed || x.best_step != y.best_step || !same_number(x.val_loss, y.val_loss) ||
      !same_number(x.best_val_loss, y.best_val_loss) || !same_number(x.last_loss, y.last_loss) ||
      !same_number(x.initial_loss, y.initial_loss) ||
      x.grad_norm_history != y.grad_norm_history) {
    fuzz::fail("state.json loads back different");
  }
  if (a.recipe.has_value() != b.recipe.has_value() ||
      (a.recipe && recipe::recipe_to_json(*a.recipe) != recipe::recipe_to_json(*b.recipe))) {
    fuzz::fail("recipe.json loads back different");
  }
}

void expect_names_a_file(const std::string& message, const fs::path& dir) {
  for (const char* name : kFiles) {
    if (message.starts_with((dir / name).string() + ": ")) return;
  }
  fuzz::fail("error does not name a checkpoint file: " + message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::Files files = fuzz::split_files(fuzz::as_text({data, size}));
  fuzz::Scratch scratch;
  const fs::path dir = scratch.output_dir("step_1");
  for (const char* name : kFiles) {
    if (const auto it = files.find(name); it != files.end()) scratch.add(std::string("step_1/") + name, it->second);
  }
  std::unique_ptr<Loaded> loaded;
  try {
    loaded = load(dir);
  } catch (const io::CheckpointError& e) {
    expect_names_a_file(e.what(), dir);
    return 0;
  }
  if (!loaded) return 0;
  const fs::path first = save(scratch.output_dir("first"), *loaded);
  std::unique_ptr<Loaded> again;
  try {
    again = load(first);
  } catch (const io::CheckpointError& e) {
    fuzz::fail(std::string("a re-saved checkpoint does not load: ") + e.what());
  }
  check_same(*loaded, *again);
  const fs::path second = save(scratch.output_dir("second"), *again);
  for (const auto& entry : fs::directory_iterator(first)) {
    const fs::path other = second / entry.path().filename();
    if (!fs::exists(other) || fuzz::read_bytes(entry.path()) != fuzz::read_bytes(other)) {
      fuzz::fail("saving a loaded checkpoint again gives other bytes in " + entry.path().filename().string());
    }
  }
  return 0;
}
