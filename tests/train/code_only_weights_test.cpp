// Code-only weights (master_weights = false): the matmul weights live as codes of their grid's
// format and nothing else. Checked here: checkpoints store U8 codes and a power-of-two scale
// instead of F32 (and load_model decodes them), the weights never leave the grid, resume and thread
// count change no bit, the run learns, the memory summary counts codes, and configs and
// checkpoints that cannot hold codes are refused with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "checkpoint/checkpoint.hpp"
#include "config/config.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "io/safetensors.hpp"
#include "support/scratch_dir.hpp"
#include "train/resume_check.hpp"
#include "train/thread_count_check.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

config::TrainConfig code_only_config(const fs::path& corpus, const std::string& quant_toml) {
  config::TrainConfig c = tiny_config(corpus);
  c.quant = config::parse_config(quant_toml, "test.toml").quant;
  c.optimizer = config::OptimizerKind::gridwalk;
  c.master_weights = false;
  c.learning_rate = 3e-3;
  c.min_lr = 3e-4;
  return c;
}

const std::string kFp8Hybrid = "[quant]\npreset = \"fp8-hybrid\"\n";

// The tensors gridwalk updates in a run without grid_embeddings: every Linear weight.
bool is_matmul_weight(const model::TensorSpec& spec) { return spec.role == model::ParameterRole::linear_weight ||
                                                               spec.role == model::ParameterRole::residual_projection; }

TEST(CodeOnlyWeights, CheckpointsStoreCodesAndAScaleAndLoadModelDecodesThem) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = code_only_config(dir.write("corpus.txt", generated_corpus()), kFp8Hybrid);
  const TrainOutcome out = run(c, dir.path() / "run");
  const fs::path path = out.last_checkpoint / "model.safetensors";
  const io::SafetensorsFile file = io::read_safetensors(path);
  const std::vector<float> loaded = final_parameters(out.last_checkpoint);
  const format::Format e4m3 = format::make_format(format::parse_format("e4m3"));
  model::ParameterLayout layout(config::gpt_config(c));
  std::size_t coded = 0;
  for (const auto& spec : layout.tensors()) {
    if (!is_matmul_weight(spec)) {
      EXPECT_EQ(file.tensors.at(spec.name).dtype, io::Dtype::f32) << spec.name;
      continue;
    }
    ++coded;
    EXPECT_FALSE(file.tensors.contains(spec.name)) << spec.name << " has an FP32 copy";
    const io::Tensor& codes = file.tensors.at(spec.name + ".codes");
    const float scale = file.tensors.at(spec.name + ".scale").data.at(0);
    EXPECT_EQ(codes.dtype, io::Dtype::u8);
    EXPECT_EQ(codes.bytes.size(), spec.slot.size);
    EXPECT_EQ(file.metadata.at(spec.name + ".format"), "e4m3");
    int exponent = 0;
    EXPECT_EQ(std::frexp(scale, &exponent), 0.5f) << spec.name << ": scale " << scale << " is not a power of two";
    for (std::size_t i = 0; i < spec.slot.size; ++i) {
      ASSERT_EQ(loaded[spec.slot.offset + i], format::decode(e4m3, codes.bytes[i]) / scale) << spec.name << "[" << i << "]";
    }
  }
  EXPECT_EQ(coded, 8u);  // two blocks of four matmuls
}

TEST(CodeOnlyWeights, WeightsStayOnTheGridAndTrainingMovesThem) {
  test_support::ScratchDir dir;
  config::TrainConfig c = code_only_config(dir.write("corpus.txt", generated_corpus()), kFp8Hybrid);
  c.max_iters = c.lr_decay_iters = 40;
  c.checkpoint_interval = 40;
  c.eval_interval = 40;
  const TrainOutcome out = run(c, dir.path() / "run");
  const io::SafetensorsFile first = io::read_safetensors(dir.path() / "run/checkpoints/step_40/model.safetensors");
  config::TrainConfig start = c;
  start.max_iters = 1;  // same initialization, one step
  const TrainOutcome one = run(start, dir.path() / "one");
  const io::SafetensorsFile early = io::read_safetensors(one.last_checkpoint / "model.safetensors");
  std::size_t changed = 0;
  for (const auto& [name, tensor] : first.tensors) {
    if (tensor.dtype != io::Dtype::u8) continue;
    const auto& before = early.tensors.at(name).bytes;
    for (std::size_t i = 0; i < before.size(); ++i) changed += before[i] != tensor.bytes[i];
  }
  EXPECT_GT(changed, 0u);
  const std::vector<double> losses = logged_losses(dir.path() / "run");
  EXPECT_LT(losses.back(), losses.front() - 0.5) << "40 steps of gridwalk on codes should learn the tiny corpus";
}

TEST(CodeOnlyWeights, ResumesBitForBit) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  expect_bit_identical_resume(code_only_config(corpus, kFp8Hybrid), dir.path() / "fp8");
  // Unquantized points: the weights live on grid_format's grid; bf16 codes take two bytes.
  config::TrainConfig bf16 = code_only_config(corpus, "");
  bf16.grid_format = "bf16";
  expect_bit_identical_resume(bf16, dir.path() / "bf16");
}

TEST(CodeOnlyWeights, TheSameBitsOnOneAndTwoThreads) {
  test_support::ScratchDir dir;
  config::TrainConfig c = code_only_config(dir.write("corpus.txt", generated_corpus()), kFp8Hybrid);
  c.diag_interval = 4;
  expect_same_bits_on_one_and_two_threads(c, dir.path());
}

TEST(CodeOnlyWeights, TheMemorySummaryCountsOneBytePerCodePlusScales) {
  test_support::ScratchDir dir;
  config::TrainConfig c = code_only_config(dir.write("corpus.txt", generated_corpus()), kFp8Hybrid);
  c.grid_embeddings = true;  // wte and wpe as codes too, on grid_format's grid (no point quantizes them)
  c.grid_format = "e4m3";
  const TrainOutcome out = run(c, dir.path() / "run");
  model::ParameterLayout layout(config::gpt_config(c));
  std::size_t coded = 0, tensors = 0;
  for (const auto& spec : layout.tensors()) {
    if (is_matmul_weight(spec) || spec.role == model::ParameterRole::embedding) {
      coded += spec.slot.size;
      ++tensors;
    }
  }
  EXPECT_EQ(out.memory.code_weights, coded);
  EXPECT_EQ(out.memory.weight_bytes, 4 * (layout.size() - coded) + coded + 4 * tensors);
  EXPECT_EQ(out.memory.decoded_weight_bytes, 4 * coded);
  EXPECT_LE(static_cast<double>(coded + 4 * tensors), 0.30 * 4.0 * static_cast<double>(coded));
}

std::string train_error(const config::TrainConfig& c, const fs::path& dir, bool resume = false) {
  try {
    (void)run(c, dir, resume);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(CodeOnlyWeights, ConfigsThatCannotHoldCodesAreRefused) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  try {
    (void)config::parse_config("optimizer = \"adamw\"\nmaster_weights = false\n", "x.toml");
    ADD_FAILURE() << "master_weights = false with adamw was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("x.toml:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gridwalk"), std::string::npos) << e.what();
  }
  const std::string mx = train_error(code_only_config(corpus, "[quant]\npreset = \"mx8\"\n"), dir.path() / "mx");
  EXPECT_NE(mx.find("MX blocks"), std::string::npos) << mx;
}

TEST(CodeOnlyWeights, CheckpointsThatDoNotMatchTheConfigAreRefused) {
  test_support::ScratchDir dir;
  config::TrainConfig c = code_only_config(dir.write("corpus.txt", generated_corpus()), kFp8Hybrid);
  c.max_iters = 4;
  (void)run(c, dir.path() / "run");
  config::TrainConfig master = c;
  master.max_iters = 8;
  master.master_weights = true;
  EXPECT_NE(train_error(master, dir.path() / "run", true).find("stored as codes"), std::string::npos);
  // And the other way: a master-weight checkpoint resumed with master_weights = false.
  master.max_iters = 4;
  (void)run(master, dir.path() / "master");
  config::TrainConfig codes = c;
  codes.max_iters = 8;
  EXPECT_NE(train_error(codes, dir.path() / "master", true).find("stored in FP32"), std::string::npos);

  // A NaN code (0x7F in E4M3) in place of a weight: refused, naming the tensor.
  const fs::path model_file = dir.path() / "run/checkpoints/step_4/model.safetensors";
  io::SafetensorsFile file = io::read_safetensors(model_file);
  const std::string name = "transformer.h.0.mlp.c_fc.weight";
  file.tensors.at(name + ".codes").bytes[3] = 0x7F;
  std::vector<io::TensorRef> refs;
  for (const auto& [n, t] : file.tensors) {
    if (t.dtype == io::Dtype::f32) {
      refs.emplace_back(n, t.shape, t.data);
    } else {
      refs.emplace_back(n, t.shape, t.dtype, t.bytes);
    }
  }
  io::write_safetensors(model_file, refs, file.metadata);
  config::TrainConfig more = c;
  more.max_iters = 8;
  const std::string corrupt = train_error(more, dir.path() / "run", true);
  EXPECT_NE(corrupt.find(name), std::string::npos) << corrupt;
  EXPECT_NE(corrupt.find("not a finite value"), std::string::npos) << corrupt;
}

}  // namespace
}  // namespace altgrad::train
