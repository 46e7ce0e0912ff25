// Training with device = "cuda" (docs/cuda.md, "Training") against the CPU engine: 300 steps of
// the default config whose validation losses stay within 1% of the CPU run's, in FP32 and in
// fp8-hybrid; the same bits on a second run and after a resume; checkpoints that move between the
// devices. Label gpu; skipped, with the reason, where the build has no CUDA engine or the process
// sees no GPU, unless ALTGRAD_REQUIRE_GPU=1 (scripts/gpu_check.sh) makes that a failure.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/backend.hpp"
#include "support/scratch_dir.hpp"
#include "train/same_run_check.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

// Why this process cannot train on a GPU, or nothing where it can.
std::optional<std::string> no_gpu() {
  try {
    (void)ops::backend_for<float>(ops::Device::cuda);
    return std::nullopt;
  } catch (const std::runtime_error& e) {
    return std::string(e.what());
  }
}

#define SKIP_WITHOUT_GPU()                                                  \
  if (const std::optional<std::string> why = no_gpu()) {                    \
    const char* required = std::getenv("ALTGRAD_REQUIRE_GPU");              \
    if (required != nullptr && std::string(required) == "1") FAIL() << *why; \
    GTEST_SKIP() << *why;                                                   \
  }

config::TrainConfig on(config::TrainConfig c, config::Device device) {
  c.device = device;
  return c;
}

// The default config (configs/default.toml) for 300 steps, evaluated every 100.
config::TrainConfig default_run(const std::string& quant_toml) {
  config::TrainConfig c;
  if (!quant_toml.empty()) c.quant = config::parse_config(quant_toml, "test.toml").quant;
  c.max_iters = 300;
  c.eval_interval = 100;
  c.checkpoint_interval = 0;
  return c;
}

TrainOutcome run_from_source(const config::TrainConfig& config, const fs::path& run_dir) {
  TrainOptions options;
  options.run_dir = run_dir;
  options.repo_root = ALTGRAD_SOURCE_DIR;
  return train(config, options);
}

std::vector<double> val_losses(const fs::path& run_dir) {
  std::vector<double> losses;
  for (const nlohmann::json& line : json_lines(run_dir / "metrics.jsonl")) {
    if (line.contains("val_loss")) losses.push_back(line.at("val_loss").get<double>());
  }
  return losses;
}

class CudaTraining : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaTraining, ValidationLossesWithinOnePercentOfTheCpus) {
  SKIP_WITHOUT_GPU();
  test_support::ScratchDir dir;
  const config::TrainConfig c = default_run(GetParam());
  ASSERT_EQ(run_from_source(on(c, config::Device::cpu), dir.path() / "cpu").stop_reason, "completed");
  ASSERT_EQ(run_from_source(on(c, config::Device::cuda), dir.path() / "cuda").stop_reason, "completed");
  const std::vector<double> cpu = val_losses(dir.path() / "cpu"), cuda = val_losses(dir.path() / "cuda");
  ASSERT_EQ(cuda.size(), 3u);
  ASSERT_EQ(cpu.size(), cuda.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_LT(std::abs(cuda[i] / cpu[i] - 1.0), 0.01) << "evaluation " << i << ": cuda " << cuda[i] << ", cpu " << cpu[i];
    std::printf("evaluation %zu: cuda %.6f, cpu %.6f (%+.3f%%)\n", i, cuda[i], cpu[i], 100.0 * (cuda[i] / cpu[i] - 1.0));
  }
}

INSTANTIATE_TEST_SUITE_P(Recipes, CudaTraining, ::testing::Values("", "[quant]\npreset = \"fp8-hybrid\"\n"));

config::TrainConfig short_run(const fs::path& corpus) {
  config::TrainConfig c = tiny_config(corpus);
  c.quant = config::parse_config("[quant]\npreset = \"fp8-hybrid\"\n[quant.grad]\nrounding = \"stochastic\"\n",
                                 "test.toml")
                .quant;
  c.max_iters = 6;
  c.diag_interval = 5;
  return on(c, config::Device::cuda);
}

TEST(CudaTrainingRepeats, SameBitsOnASecondRunAndAfterAResume) {
  SKIP_WITHOUT_GPU();
  test_support::ScratchDir dir;
  const config::TrainConfig c = short_run(dir.write("corpus.txt", generated_corpus()));
  ASSERT_EQ(run(c, dir.path() / "first").stop_reason, "completed");
  ASSERT_EQ(run(c, dir.path() / "second").stop_reason, "completed");
  expect_same_run(dir.path() / "first", dir.path() / "second");
  ASSERT_TRUE(run_interrupted(c, dir.path() / "resumed", 3).interrupted);
  ASSERT_EQ(run(c, dir.path() / "resumed", true).stop_reason, "completed");
  expect_same_run(dir.path() / "first", dir.path() / "resumed");
}

// A checkpoint written on one device resumes on the other: the same files, read the same way.
TEST(CudaTrainingCheckpoints, MoveBetweenTheDevices) {
  SKIP_WITHOUT_GPU();
  test_support::ScratchDir dir;
  const config::TrainConfig cuda = short_run(dir.write("corpus.txt", generated_corpus()));
  const config::TrainConfig cpu = on(cuda, config::Device::cpu);
  for (const auto& [from, to, name] : {std::tuple{cpu, cuda, "cpu_to_cuda"}, std::tuple{cuda, cpu, "cuda_to_cpu"}}) {
    ASSERT_TRUE(run_interrupted(from, dir.path() / name, 3).interrupted) << name;
    const TrainOutcome resumed = run(to, dir.path() / name, true);
    EXPECT_EQ(resumed.stop_reason, "completed") << name;
    EXPECT_EQ(resumed.steps, 6) << name;
    EXPECT_TRUE(std::isfinite(resumed.final_val_loss)) << name;
  }
}

}  // namespace
}  // namespace altgrad::train
