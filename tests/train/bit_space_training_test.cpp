// The bit-space optimizers in the trainer: each resumes bit for bit under a quantized recipe
// (delayed per-tensor scales and MX block scales feed the grids), checkpoints hold their named
// state, optimizer.json assigns matmul weights to them and everything else to AdamW, and bad
// config values are refused naming the file and line.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/checkpoint.hpp"
#include "config/config.hpp"
#include "diag/grid_geometry.hpp"
#include "format/parse.hpp"
#include "io/safetensors.hpp"
#include "support/scratch_dir.hpp"
#include "train/optimizer_assignment.hpp"
#include "train/resume_check.hpp"
#include "train/thread_count_check.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

config::TrainConfig bit_space_config(const fs::path& corpus, config::OptimizerKind kind, const std::string& preset) {
  config::TrainConfig c = tiny_config(corpus);
  c.quant = config::parse_config("[quant]\npreset = \"" + preset + "\"\n", "test.toml").quant;
  c.optimizer = kind;
  c.learning_rate = kind == config::OptimizerKind::madam || kind == config::OptimizerKind::madam_int ? 0.02 : 3e-3;
  c.min_lr = c.learning_rate / 10;
  return c;
}

class BitSpaceTraining : public ::testing::TestWithParam<config::OptimizerKind> {};

TEST_P(BitSpaceTraining, ResumesBitForBitUnderDelayedAndBlockScales) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  expect_bit_identical_resume(bit_space_config(corpus, GetParam(), "fp8-hybrid"), dir.path() / "fp8");
  expect_bit_identical_resume(bit_space_config(corpus, GetParam(), "mx8"), dir.path() / "mx8");
}

TEST_P(BitSpaceTraining, TheSameBitsOnOneAndTwoThreads) {
  test_support::ScratchDir dir;
  config::TrainConfig c = bit_space_config(dir.write("corpus.txt", generated_corpus()), GetParam(), "mx8");
  c.diag_interval = 4;  // the geometry diagnostics too
  expect_same_bits_on_one_and_two_threads(c, dir.path());
}

TEST_P(BitSpaceTraining, CheckpointsHoldTheNamedStateAndTheRunNamesEachTensorsOptimizer) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = bit_space_config(dir.write("corpus.txt", generated_corpus()), GetParam(), "fp8-hybrid");
  const TrainOutcome outcome = run(c, dir.path() / "run");
  const std::string name(config::kOptimizerNames[static_cast<std::size_t>(GetParam())]);
  const auto saved = io::read_safetensors(outcome.last_checkpoint / "optimizer.safetensors");
  EXPECT_EQ(saved.metadata.at("optimizer"), name);
  EXPECT_TRUE(saved.tensors.contains("exp_avg") && saved.tensors.contains("exp_avg_sq"));
  const bool madam = GetParam() == config::OptimizerKind::madam || GetParam() == config::OptimizerKind::madam_int;
  EXPECT_EQ(saved.tensors.contains("weight_bound"), madam);

  std::ifstream in(dir.path() / "run" / "optimizer.json");
  const nlohmann::json json = nlohmann::json::parse(in);
  EXPECT_EQ(json.at("optimizer"), name);
  model::Gpt<float> gpt(checkpoint::load_checkpoint_config(outcome.last_checkpoint));
  const auto specs = gpt.layout().tensors();
  ASSERT_EQ(json.at("tensors").size(), specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& tensor = json.at("tensors")[i];
    const bool matmul = specs[i].role == model::ParameterRole::linear_weight ||
                        specs[i].role == model::ParameterRole::residual_projection;
    EXPECT_EQ(tensor.at("optimizer"), matmul ? name : "adamw") << specs[i].name;
    // fp8-hybrid quantizes every block matmul's weight in E4M3 with delayed scaling.
    if (matmul) {
      EXPECT_EQ(tensor.at("grid").get<std::string>().rfind("e4m3, delayed scaling of h.", 0), 0u) << tensor;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, BitSpaceTraining,
                         ::testing::Values(config::OptimizerKind::stiffness_adamw, config::OptimizerKind::gridwalk, config::OptimizerKind::madam,
                                           config::OptimizerKind::madam_int),
                         [](const ::testing::TestParamInfo<config::OptimizerKind>& p) {
                           return std::string(config::kOptimizerNames[static_cast<std::size_t>(p.param)]);
                         });

TEST(BitSpaceTraining, GridEmbeddingsPutsTheEmbeddingsOnTheGrid) {
  test_support::ScratchDir dir;
  config::TrainConfig c = bit_space_config(dir.write("corpus.txt", generated_corpus()), config::OptimizerKind::gridwalk, "fp32");
  c.grid_embeddings = true;
  c.grid_format = "e5m2";
  c.max_iters = 2;
  run(c, dir.path() / "run");
  std::ifstream in(dir.path() / "run" / "optimizer.json");
  const nlohmann::json json = nlohmann::json::parse(in);
  EXPECT_EQ(json.at("tensors")[0].at("name"), "transformer.wte.weight");
  EXPECT_EQ(json.at("tensors")[0].at("optimizer"), "gridwalk");
  EXPECT_EQ(json.at("tensors")[0].at("grid"), "e5m2 (grid_format), unscaled");
  EXPECT_EQ(json.at("tensors")[2].at("optimizer"), "adamw");  // ln_1.weight
}

// The geometry a diagnostic step logs, recomputed from the checkpoints on either side of it: an
// AdamW run in FP32 measures its matmul weights on the bf16 grid_format, unscaled, with the applied
// update as the intended one.
TEST(BitSpaceTraining, GeometryDiagnosticsAreThoseOfTheStepTaken) {
  test_support::ScratchDir dir;
  config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  c.diag_interval = 4;
  c.checkpoint_interval = 1;
  const TrainOutcome outcome = run(c, dir.path() / "run");
  ASSERT_EQ(outcome.stop_reason, "completed");
  const auto lines = json_lines(dir.path() / "run" / "metrics.jsonl");
  const nlohmann::json& geometry = lines[3].at("diag").at("geometry");  // step 4
  const fs::path checkpoints = dir.path() / "run" / "checkpoints";
  model::Gpt<float> before(checkpoint::load_checkpoint_config(checkpoints / "step_3")), after(before.config());
  checkpoint::load_model(checkpoints / "step_3", before);
  checkpoint::load_model(checkpoints / "step_4", after);
  const optim::WeightGrid bf16{format::make_format(format::parse_format("bf16"))};
  std::size_t checked = 0;
  for (const auto& spec : before.layout().tensors()) {
    const bool matmul = spec.role == model::ParameterRole::linear_weight ||
                        spec.role == model::ParameterRole::residual_projection;
    EXPECT_EQ(geometry.contains(spec.name), matmul) << spec.name;
    if (!matmul) continue;
    const auto b = before.parameter(spec.name), a = after.parameter(spec.name);
    std::vector<float> applied(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) applied[i] = a[i] - b[i];
    const diag::GridGeometry want = diag::grid_geometry(bf16, b, a, applied, applied);
    const auto& got = geometry.at(spec.name);
    EXPECT_EQ(got.at("update_underflow").get<double>(), want.update_underflow) << spec.name;
    EXPECT_EQ(got.at("update_success").get<double>(), want.update_success) << spec.name;
    EXPECT_EQ(got.at("delta_code").get<std::vector<std::uint64_t>>(),
              std::vector<std::uint64_t>(want.delta_code.begin(), want.delta_code.end())) << spec.name;
    EXPECT_EQ(got.at("capacity").get<double>(), want.capacity) << spec.name;
    EXPECT_EQ(got.at("stiffness_entropy").get<double>(), want.stiffness_entropy) << spec.name;
    EXPECT_EQ(got.at("delta_code_mean").get<double>(), want.delta_code_mean) << spec.name;
    EXPECT_EQ(got.at("delta_code_variance").get<double>(), want.delta_code_variance) << spec.name;
    EXPECT_GT(want.update_success, 0.0) << spec.name;
    ++checked;
  }
  EXPECT_EQ(checked, 8u);  // two blocks of four matmuls
}

std::string config_error(const std::string& toml) {
  try {
    (void)config::parse_config(toml, "x.toml");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(BitSpaceConfig, BadValuesAreRefusedWithFileAndLine) {
  EXPECT_EQ(config_error("optimizer = \"gridwalk\"\ngrid_format = \"e9m9\"\n").rfind("x.toml:2: grid_format = \"e9m9\" is not a format", 0), 0u)
      << config_error("grid_format = \"e9m9\"\n");
  EXPECT_NE(config_error("\nstiffness_power = 3\n").find("x.toml:2"), std::string::npos);
  EXPECT_NE(config_error("precondition = \"both\"\n").find("x.toml:1: precondition = \"both\" is not allowed"), std::string::npos)
      << config_error("precondition = \"both\"\n");
  EXPECT_NE(config_error("madam_beta = 1.0\n").find("x.toml:1"), std::string::npos);
  EXPECT_NE(config_error("madam_g_bound = 0\n").find("x.toml:1"), std::string::npos);
  EXPECT_NE(config_error("optimizer = \"madam2\"\n").find("madam_int"), std::string::npos);
  const std::string not_bit_space = config_error("\nadamw_learning_rate = 0.003\n");
  EXPECT_NE(not_bit_space.find("x.toml:2"), std::string::npos) << not_bit_space;
  EXPECT_NE(not_bit_space.find("applies only to the bit-space optimizers"), std::string::npos) << not_bit_space;
  EXPECT_NE(config_error("optimizer = \"madam\"\nadamw_learning_rate = -1\n").find("x.toml:2"), std::string::npos);
}

// The tensors a bit-space optimizer leaves to AdamW step at adamw_learning_rate on the schedule
// of learning_rate: the ratio of the two peaks (optim/bit_space_test.cpp checks the step itself).
TEST(BitSpaceConfig, AdamwLearningRateIsARatioToTheSchedule) {
  EXPECT_EQ(optimizer_spec(config::parse_config("optimizer = \"madam\"\n", "x.toml")).bit_space.adamw_lr_ratio, 1.0);
  const config::TrainConfig c = config::parse_config("optimizer = \"madam\"\nlearning_rate = 0.05\nmin_lr = 0.005\n"
                                     "adamw_learning_rate = 0.002\n", "x.toml");
  EXPECT_DOUBLE_EQ(optimizer_spec(c).bit_space.adamw_lr_ratio, 0.04);
}

}  // namespace
}  // namespace altgrad::train
