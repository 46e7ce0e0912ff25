// SGD against PyTorch's torch.optim.SGD (Debian's python3-torch): the engine takes several steps
// from fixed weights with fixed gradients and a changing learning rate, and
// tests/reference/torch_sgd.py replays them with torch.optim.SGD, comparing the weights after every
// step and the final momentum buffer (relative error 1e-6). Covers momentum 0 and 0.9, Nesterov on
// and off, with weight decay on some ranges only. Skipped, with the reason, where PyTorch is absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "io/safetensors.hpp"
#include "optim/sgd.hpp"
#include "support/scratch_dir.hpp"
#include "support/torch_reference.hpp"

namespace altgrad::train {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kParameters = 1000;
constexpr std::size_t kSteps = 5;


// Values in [-1, 1) from a fixed linear congruential sequence: independent of any library's RNG.
std::vector<float> values(std::size_t n, std::uint32_t seed) {
  std::vector<float> out(n);
  for (auto& v : out) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return out;
}

struct Case {
  const char* name;
  optim::SgdConfig config;
};

// Runs the engine's SGD and writes everything PyTorch needs to replay it.
fs::path write_case(const Case& c, const fs::path& dir) {
  const std::vector<optim::ParameterRange> ranges = {{0, 600, true}, {600, 100, false}, {700, 300, true}};
  optim::Sgd sgd(kParameters, c.config, ranges);
  std::vector<float> params = values(kParameters, 1);
  const std::vector<float> params0 = params;
  const std::vector<float> grads = values(kSteps * kParameters, 2);
  const std::vector<float> lrs = {0.1f, 0.08f, 0.05f, 0.03f, 0.01f};
  std::vector<float> expected;
  for (std::size_t s = 0; s < kSteps; ++s) {
    sgd.step(params, std::span(grads).subspan(s * kParameters, kParameters), lrs[s]);
    expected.insert(expected.end(), params.begin(), params.end());
  }
  const auto n = static_cast<std::int64_t>(kParameters), steps = static_cast<std::int64_t>(kSteps);
  std::vector<io::TensorRef> tensors = {{"params0", {n}, params0},
                                    {"grads", {steps, n}, grads},
                                    {"lrs", {steps}, lrs},
                                    {"expected", {steps, n}, expected}};
  for (const auto& state : sgd.state()) tensors.push_back({state.name, {n}, state.values});
  std::string range_text;
  for (const auto& r : ranges) {
    range_text += (range_text.empty() ? "" : ";") + std::to_string(r.offset) + ":" + std::to_string(r.size) + ":" +
                  (r.decay ? "1" : "0");
  }
  const fs::path path = dir / (std::string(c.name) + ".safetensors");
  io::write_safetensors(path, tensors,
                    {{"case", c.name},
                     {"momentum", std::to_string(c.config.momentum)},
                     {"nesterov", c.config.nesterov ? "true" : "false"},
                     {"weight_decay", std::to_string(c.config.weight_decay)},
                     {"ranges", range_text}});
  return path;
}

TEST(TorchSgd, StepsAndMomentumBufferAgreeWithPyTorch) {
  if (!test_support::python_imports("torch")) GTEST_SKIP() << "PyTorch not found: " << test_support::kPython << " cannot import torch (scripts/setup.sh installs python3-torch)";
  test_support::ScratchDir scratch;
  const Case cases[] = {
      {"momentum0-decay", {0.0f, false, 0.1f}},
      {"momentum0.9-decay", {0.9f, false, 0.1f}},
      {"momentum0.9-nesterov-decay", {0.9f, true, 0.1f}},
      {"momentum0.9-nesterov", {0.9f, true, 0.0f}},
  };
  std::string command = std::string(test_support::kPython) + " " + ALTGRAD_SOURCE_DIR + "/tests/reference/torch_sgd.py";
  for (const Case& c : cases) command += " " + write_case(c, scratch.path()).string();
  EXPECT_EQ(std::system(command.c_str()), 0) << "PyTorch disagrees (see the table above)";
}

}  // namespace
}  // namespace altgrad::train
