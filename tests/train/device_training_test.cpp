// A device run's path through the trainer (train/device_replica.hpp) on a backend whose memory
// faults at any host access outside the seam (model/guarded_backend.hpp): the CPU's kernels and,
// where the run has one, the CPU's quantizer as the device's engine (guarded_quantizer.hpp), so the
// run must leave the CPU run's bits. Any host read of the replica's buffers (an observer, the
// optimizer, a checkpoint, a hook's copy between q, k and v) dies with SIGSEGV instead.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "model/guarded_backend.hpp"
#include "support/scratch_dir.hpp"
#include "train/guarded_quantizer.hpp"
#include "train/same_run_check.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

// Quantizer::engine quantizes what its engine covers on the device; Quantizer::host every
// hooked operand through the host.
enum class Quantizer { engine, host };

TrainOutcome run_guarded(const config::TrainConfig& config, const fs::path& run_dir, Quantizer quantizer,
                         bool resume = false, int interrupt_after = 0,
                         std::optional<std::pair<std::string, std::int64_t>> inject_nan = std::nullopt) {
  model_test::GuardedBackend<float> guarded;
  GuardedQuantizer engine(guarded.memory);
  TrainOptions options;
  options.run_dir = run_dir;
  options.resume = resume;
  options.inject_nan = std::move(inject_nan);
  options.passes_device = PassesDevice{guarded.backend(), quantizer == Quantizer::engine ? &engine : nullptr};
  int boundaries = 0;
  if (interrupt_after > 0) {
    options.interruption = [&]() -> std::optional<std::string> {
      return ++boundaries >= interrupt_after ? std::optional<std::string>("a test") : std::nullopt;
    };
  }
  return train(config, options);
}

// Steps 1–6 with an evaluation at 4, a checkpoint at 4 and 6, and full diagnostics at step 5 (they
// read the activations and take an unquantized shadow gradient). `toml` gives the recipe and the
// optimizer.
config::TrainConfig device_config(const fs::path& corpus, const std::string& toml) {
  config::TrainConfig c = tiny_config(corpus);
  const config::TrainConfig parsed = config::parse_config(toml, "test.toml");
  c.quant = parsed.quant;
  c.optimizer = parsed.optimizer;
  c.master_weights = parsed.master_weights;
  c.max_iters = 6;
  c.diag_interval = 5;
  c.gradient_accumulation_steps = 2;
  return c;
}

struct DeviceCase {
  const char* name;
  const char* toml;
};

void PrintTo(const DeviceCase& c, std::ostream* out) { *out << c.name; }

class DeviceTraining : public ::testing::TestWithParam<DeviceCase> {};

TEST_P(DeviceTraining, GivesTheCpuRunsBits) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = device_config(dir.write("corpus.txt", generated_corpus()), GetParam().toml);
  ASSERT_EQ(run(c, dir.path() / "cpu").stop_reason, "completed");
  ASSERT_EQ(run_guarded(c, dir.path() / "engine", Quantizer::engine).stop_reason, "completed");
  ASSERT_EQ(run_guarded(c, dir.path() / "host", Quantizer::host).stop_reason, "completed");
  expect_same_run(dir.path() / "cpu", dir.path() / "engine");
  expect_same_run(dir.path() / "cpu", dir.path() / "host");
  // The diagnostics read the device's activations (attention entropy) at step 5.
  const std::vector<nlohmann::json> lines = json_lines(dir.path() / "engine" / "metrics.jsonl");
  EXPECT_TRUE(lines.at(4).dump().find("attention_entropy") != std::string::npos) << lines.at(4).dump();
}

// FP32 (no hooks); per-tensor delayed scaling with stochastic rounding of the gradients and the
// attention's q, k, v and probabilities hooked (their copies gathered and scattered on the device);
// MX blocks, whose backward GEMMs ask for copies along their own axes; gridwalk on code-only
// weights, which the host's optimizer decodes into the master copy; per-GEMM settings, whose own
// copies go through the host; Tseng et al.'s MXFP4 backward pass (its 3/4-scaled blocks on the
// host too), with 16-point transforms, which this model's axes take; torchao's rowwise scaling,
// whose whole-axis blocks go through the host, with the weights at a power-of-two tensor scale,
// which the engine computes from its own amax.
INSTANTIATE_TEST_SUITE_P(
    Recipes, DeviceTraining,
    ::testing::Values(DeviceCase{"fp32", ""},
                      DeviceCase{"delayed", "[quant]\npreset = \"fp8-hybrid\"\n[quant.grad]\nrounding = \"stochastic\"\n"
                                            "[[quant.override]]\nmatch = \"h.*.attn.*\"\nformat = \"e4m3\"\n"},
                      DeviceCase{"mx", "[quant]\npreset = \"mx8\"\n[[quant.override]]\nmatch = \"h.*.attn.*\"\n"
                                       "format = \"e4m3\"\n"},
                      DeviceCase{"gridwalk_codes", "optimizer = \"gridwalk\"\nmaster_weights = false\n"
                                                   "[quant]\npreset = \"fp8-hybrid\"\n"},
                      DeviceCase{"per_gemm", "[quant]\npreset = \"te-current\"\n[[quant.override]]\nmatch = \"*\"\n"
                                             "gemm = \"wgrad\"\nenabled = false\n[[quant.override]]\n"
                                             "match = \"*:weight\"\ngemm = \"dgrad\"\nformat = \"e2m1\"\n"
                                             "scaling = \"block\"\nblock = 16\n"},
                      DeviceCase{"tseng", "[quant]\npreset = \"tseng-mxfp4\"\n[quant.hadamard]\n"
                                          "gemms = [\"dgrad\", \"wgrad\"]\nsize = 16\n"},
                      DeviceCase{"axiswise", "[quant]\npreset = \"torchao-rowwise\"\n[quant.weight]\n"
                                             "scaling = \"tensor\"\nscale_format = \"fp32_pow2\"\n"}),
    [](const ::testing::TestParamInfo<DeviceCase>& param) { return std::string(param.param.name); });

TEST(DeviceTrainingResume, ContinuesTheCpuRunsBits) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = device_config(dir.write("corpus.txt", generated_corpus()),
                                              "[quant]\npreset = \"fp8-hybrid\"\n");
  ASSERT_EQ(run(c, dir.path() / "cpu").stop_reason, "completed");
  ASSERT_TRUE(run_guarded(c, dir.path() / "device", Quantizer::engine, false, 3).interrupted);
  ASSERT_EQ(run_guarded(c, dir.path() / "device", Quantizer::engine, true).stop_reason, "completed");
  expect_same_run(dir.path() / "cpu", dir.path() / "device");
}

// The CPU run's stop reason, naming the same point: the hooks' record and the activations'
// scan come from the device's passes.
TEST(DeviceTrainingNonFinite, StopsWhereTheCpuRunStops) {
  test_support::ScratchDir dir;
  config::TrainConfig c = device_config(dir.write("corpus.txt", generated_corpus()), "");
  c.learning_rate = 1e30;
  c.grad_clip = 0.0;
  const TrainOutcome cpu = run(c, dir.path() / "cpu");
  const TrainOutcome device = run_guarded(c, dir.path() / "device", Quantizer::engine);
  EXPECT_NE(cpu.stop_reason, "completed");
  EXPECT_EQ(device.stop_reason, cpu.stop_reason);
}

// --inject-nan on the device: the NaN is written into the device's copy, and the stop names the
// point, as on the CPU.
TEST(DeviceTrainingNonFinite, AnInjectedNanStopsWhereTheCpuRunStops) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = device_config(dir.write("corpus.txt", generated_corpus()), "[quant]\npreset = \"fp8-hybrid\"\n");
  TrainOptions options;
  options.run_dir = dir.path() / "cpu";
  options.inject_nan = {{"h.1.mlp.c_fc:act", 3}};
  const TrainOutcome cpu = train(c, options);
  const TrainOutcome device = run_guarded(c, dir.path() / "device", Quantizer::engine, false, 0, options.inject_nan);
  EXPECT_NE(cpu.stop_reason.find("h.1.mlp.c_fc:act"), std::string::npos) << cpu.stop_reason;
  EXPECT_EQ(device.stop_reason, cpu.stop_reason);
}

TEST(DeviceTrainingRefusal, NamesAccumulatorModels) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = device_config(dir.write("corpus.txt", generated_corpus()),
                                              "[quant]\npreset = \"fp8-hybrid\"\naccumulate = \"hopper\"\n");
  try {
    run_guarded(c, dir.path() / "device", Quantizer::engine);
    FAIL() << "a device run with an accumulator model started";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("[quant] accumulate"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "device"));
}

}  // namespace
}  // namespace altgrad::train
