// The engine against PyTorch (Debian's python3-torch) on the same weights: a checkpoint written
// here is loaded by tests/reference/torch_crosscheck.py into a nanoGPT-structured PyTorch model with
// load_state_dict(strict=True), which recomputes loss, logits, every gradient and one AdamW step
// and compares them with ours (relative error 1e-5). Skipped, with the reason, where PyTorch is absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "io/safetensors.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "optim/adamw.hpp"
#include "support/scratch_dir.hpp"
#include "support/torch_reference.hpp"

namespace altgrad::train {
namespace {

namespace fs = std::filesystem;



struct Variant {
  const char* name;
  model::Norm norm;
  model::Mlp mlp;
  bool bias;
};

// Writes the checkpoint and what the engine computed on one batch, then runs the PyTorch side.
void cross_check(const Variant& v, const fs::path& dir) {
  model::GptConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  c.block_size = 8;
  c.bias = v.bias;
  c.norm = v.norm;
  c.mlp = v.mlp;
  c.mlp_hidden = model::hidden_size(c);
  model::Gpt<float> gpt(c);
  gpt.initialize(7);
  // Non-trivial norm weights and biases, so their gradients and uses are all exercised.
  for (const auto& spec : gpt.layout().tensors()) {
    if (spec.shape.size() == 1) {
      auto p = gpt.parameter(spec.name);
      for (std::size_t i = 0; i < p.size(); ++i) p[i] += 0.01f * static_cast<float>((i * 7 + spec.slot.offset) % 13) - 0.06f;
    }
  }
  optim::AdamW adam(gpt.layout().size(), {0.9f, 0.95f, 1e-8f, 0.1f}, {{0, gpt.layout().size(), true}});
  const fs::path checkpoint = checkpoint::save_checkpoint(dir, gpt, adam, checkpoint::CheckpointState{});

  const std::size_t B = 2, T = 8, V = c.vocab_size;
  std::vector<std::int32_t> tokens(B * T), targets(B * T);
  for (std::size_t i = 0; i < B * T; ++i) {
    tokens[i] = static_cast<std::int32_t>((i * 37 + 11) % V);
    targets[i] = static_cast<std::int32_t>((i * 53 + 5) % V);
  }
  model::Activations<float> acts(c, B, T);
  const float loss = model::gpt_forward(gpt, acts, tokens, targets);
  gpt.zero_gradients();
  model::gpt_backward(gpt, acts);

  std::map<std::string, std::vector<float>> copies;  // keeps the spans below alive
  std::vector<io::TensorRef> expected;
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values) {
    expected.push_back({name, std::move(shape), copies.emplace(name, std::move(values)).first->second});
  };
  add("loss", {1}, {loss});
  add("logits", {2, 8, static_cast<std::int64_t>(V)}, {acts.logits.begin(), acts.logits.end()});
  add("tokens", {2, 8}, {tokens.begin(), tokens.end()});
  add("targets", {2, 8}, {targets.begin(), targets.end()});
  for (const auto& spec : gpt.layout().tensors()) {
    const auto g = gpt.gradient(spec.name);
    add("grad." + spec.name, {spec.shape.begin(), spec.shape.end()}, {g.begin(), g.end()});
  }
  // One AdamW step with nanoGPT's grouping: decay for tensors of two or more dimensions.
  std::vector<optim::ParameterRange> ranges;
  for (const auto& spec : gpt.layout().tensors()) ranges.push_back({spec.slot.offset, spec.slot.size, spec.shape.size() >= 2});
  optim::AdamW step_adam(gpt.layout().size(), {0.9f, 0.95f, 1e-8f, 0.1f}, ranges);
  step_adam.step(gpt.parameters(), gpt.gradients(), 1e-3f);
  for (const auto& spec : gpt.layout().tensors()) {
    const auto p = gpt.parameter(spec.name);
    add("adamw." + spec.name, {spec.shape.begin(), spec.shape.end()}, {p.begin(), p.end()});
  }
  io::write_safetensors(dir / "expected.safetensors", expected,
                    {{"lr", "0.001"}, {"beta1", "0.9"}, {"beta2", "0.95"}, {"eps", "1e-8"}, {"weight_decay", "0.1"}});

  const std::string command = std::string(test_support::kPython) + " " + ALTGRAD_SOURCE_DIR + "/tests/reference/torch_crosscheck.py " +
                              checkpoint.string() + " " + (dir / "expected.safetensors").string();
  EXPECT_EQ(std::system(command.c_str()), 0) << v.name << ": PyTorch disagrees (see the table above)";
}

TEST(TorchCrossCheck, LossLogitsGradientsAndAdamWAgreeWithPyTorch) {
  if (!test_support::python_imports("torch")) GTEST_SKIP() << "PyTorch not found: " << test_support::kPython << " cannot import torch (scripts/setup.sh installs python3-torch)";
  const Variant variants[] = {
      {"layernorm+gelu+bias", model::Norm::layernorm, model::Mlp::gelu, true},
      {"layernorm+gelu", model::Norm::layernorm, model::Mlp::gelu, false},
      {"rmsnorm+swiglu", model::Norm::rmsnorm, model::Mlp::swiglu, false},
      {"layernorm+swiglu+bias", model::Norm::layernorm, model::Mlp::swiglu, true},
  };
  for (const Variant& v : variants) {
    test_support::ScratchDir scratch;
    SCOPED_TRACE(v.name);
    cross_check(v, scratch.path() / v.name);
  }
}

}  // namespace
}  // namespace altgrad::train
