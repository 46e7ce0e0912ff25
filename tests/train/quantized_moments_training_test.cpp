// AdamW's low-precision moments end to end (docs/optimizers.md, "Low-precision optimizer state"):
// checkpoints hold codes and per-group scales and no FP32 moments, resume is bit for bit with
// stochastic rounding, the same bits on one and two threads, the run learns, the memory summary
// counts the smaller state, and checkpoints of the other storage are refused by name.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "io/safetensors.hpp"
#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"
#include "train/resume_check.hpp"
#include "train/thread_count_check.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;
using test_support::message_of;

config::TrainConfig low_precision_moments(const fs::path& corpus, format::Rounding rounding) {
  config::TrainConfig c = tiny_config(corpus);
  c.adam_m_format = "e4m3";
  c.adam_v_format = "e5m2";
  c.adam_state_group = 64;
  c.adam_state_rounding = rounding;
  return c;
}

TEST(QuantizedMoments, ResumeIsBitForBitWithStochasticAndNearestWrites) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  expect_bit_identical_resume(low_precision_moments(corpus, format::Rounding::stochastic), dir.path() / "stochastic");
  expect_bit_identical_resume(low_precision_moments(corpus, format::Rounding::nearest_even), dir.path() / "nearest");
}

TEST(QuantizedMoments, TheSameBitsOnOneAndTwoThreads) {
  test_support::ScratchDir dir;
  expect_same_bits_on_one_and_two_threads(
      low_precision_moments(dir.write("corpus.txt", generated_corpus()), format::Rounding::stochastic), dir.path());
}

TEST(QuantizedMoments, CheckpointsHoldCodesAndScalesNotFp32Moments) {
  test_support::ScratchDir dir;
  config::TrainConfig c = low_precision_moments(dir.write("corpus.txt", generated_corpus()), format::Rounding::stochastic);
  c.adam_v_format = "bf16";
  const TrainOutcome outcome = run(c, dir.path() / "run");
  const auto file = io::read_safetensors(outcome.last_checkpoint / "optimizer.safetensors");
  const std::size_t n = outcome.parameters;
  EXPECT_EQ(file.tensors.size(), 4u);
  EXPECT_FALSE(file.tensors.contains("exp_avg") || file.tensors.contains("exp_avg_sq"));
  EXPECT_EQ(file.tensors.at("exp_avg.codes").dtype, io::Dtype::u8);
  EXPECT_EQ(file.tensors.at("exp_avg.codes").bytes.size(), n);
  EXPECT_EQ(file.tensors.at("exp_avg_sq.codes").dtype, io::Dtype::u16);
  EXPECT_EQ(file.tensors.at("exp_avg_sq.codes").bytes.size(), 2 * n);
  EXPECT_EQ(file.metadata.at("exp_avg.format"), "e4m3");
  EXPECT_EQ(file.metadata.at("exp_avg_sq.format"), "bf16");
  EXPECT_EQ(file.metadata.at("exp_avg.group"), "64");
  // One scale per group of 64 within each parameter tensor: at least n / 64, and every one used.
  const std::size_t groups = file.tensors.at("exp_avg.scales").data.size();
  EXPECT_GE(groups, n / 64);
  EXPECT_LT(groups, n / 64 + 20);  // at most one partial group per tensor (2 layers: under 20 tensors)
  for (const float d : file.tensors.at("exp_avg.scales").data) EXPECT_GT(d, 0.0f);

  const auto events = json_lines(dir.path() / "run" / "events.jsonl");
  const nlohmann::json& memory = events.back().at("memory");
  EXPECT_EQ(memory.at("state_bytes").at("exp_avg").get<std::size_t>(), n + 4 * groups);
  EXPECT_EQ(memory.at("state_bytes").at("exp_avg_sq").get<std::size_t>(), 2 * n + 4 * groups);
  const auto assignment = nlohmann::json::parse(bytes_of(dir.path() / "run" / "optimizer.json"));
  EXPECT_EQ(assignment.at("quantized_state").at("exp_avg").at("format"), "e4m3");
  EXPECT_EQ(assignment.at("quantized_state").at("exp_avg_sq").at("group"), 64);
}

TEST(QuantizedMoments, TheRunLearns) {
  test_support::ScratchDir dir;
  config::TrainConfig c = low_precision_moments(dir.write("corpus.txt", generated_corpus()), format::Rounding::nearest_even);
  c.max_iters = c.lr_decay_iters = 60;
  c.eval_interval = 60;
  c.checkpoint_interval = 0;
  c.learning_rate = 3e-3;
  c.min_lr = 3e-4;
  run(c, dir.path() / "run");
  const auto losses = logged_losses(dir.path() / "run");
  ASSERT_EQ(losses.size(), 60u);
  EXPECT_LT(losses.back(), losses.front() - 1.0) << "first " << losses.front() << ", last " << losses.back();
}

TEST(QuantizedMoments, ACheckpointOfTheOtherStorageIsRefusedByName) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  config::TrainConfig fp32 = tiny_config(corpus);
  fp32.max_iters = 4;
  run(fp32, dir.path() / "fp32");
  std::string message = message_of<std::exception>(
      [&] { run(low_precision_moments(corpus, format::Rounding::nearest_even), dir.path() / "fp32", /*resume=*/true); });
  EXPECT_NE(message.find("optimizer.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("'exp_avg'"), std::string::npos) << message;
  EXPECT_NE(message.find("stored in FP32"), std::string::npos) << message;

  config::TrainConfig codes = low_precision_moments(corpus, format::Rounding::nearest_even);
  codes.max_iters = 4;
  run(codes, dir.path() / "codes");
  message = message_of<std::exception>([&] { run(tiny_config(corpus), dir.path() / "codes", /*resume=*/true); });
  EXPECT_NE(message.find("'exp_avg'"), std::string::npos) << message;
  EXPECT_NE(message.find("e4m3 codes"), std::string::npos) << message;

  config::TrainConfig other_group = tiny_config(corpus);
  other_group.adam_m_format = "e4m3";
  other_group.adam_v_format = "e5m2";
  other_group.adam_state_group = 32;
  message = message_of<std::exception>([&] { run(other_group, dir.path() / "codes", /*resume=*/true); });
  EXPECT_NE(message.find("groups of 64"), std::string::npos) << message;
  config::TrainConfig other_format = low_precision_moments(corpus, format::Rounding::nearest_even);
  other_format.adam_v_format = "e4m3";
  message = message_of<std::exception>([&] { run(other_format, dir.path() / "codes", /*resume=*/true); });
  EXPECT_NE(message.find("'exp_avg_sq'"), std::string::npos) << message;
  EXPECT_NE(message.find("stored as e5m2 codes"), std::string::npos) << message;
}

TEST(QuantizedMoments, ABadScaleOrCodeIsRefusedNamingFileAndTensor) {
  test_support::ScratchDir dir;
  config::TrainConfig c = low_precision_moments(dir.write("corpus.txt", generated_corpus()), format::Rounding::nearest_even);
  c.max_iters = 2;
  const TrainOutcome outcome = run(c, dir.path() / "run");
  const fs::path file = outcome.last_checkpoint / "optimizer.safetensors";
  const io::SafetensorsFile saved = io::read_safetensors(file);
  const auto rewrite = [&](std::vector<float> scales, std::vector<std::uint8_t> codes) {
    const io::Tensor &v_codes = saved.tensors.at("exp_avg_sq.codes"), &v_scales = saved.tensors.at("exp_avg_sq.scales");
    io::write_safetensors(file,
                          std::vector<io::TensorRef>{{"exp_avg.codes", {static_cast<std::int64_t>(codes.size())}, io::Dtype::u8, codes},
                                                     {"exp_avg.scales", {static_cast<std::int64_t>(scales.size())}, scales},
                                                     {"exp_avg_sq.codes", v_codes.shape, io::Dtype::u8, v_codes.bytes},
                                                     {"exp_avg_sq.scales", v_scales.shape, v_scales.data}},
                          saved.metadata);
    return message_of<std::exception>([&] { run(c, dir.path() / "run", /*resume=*/true); });
  };
  std::vector<float> scales = saved.tensors.at("exp_avg.scales").data;
  std::vector<std::uint8_t> codes = saved.tensors.at("exp_avg.codes").bytes;
  scales[1] = 0.0f;
  std::string message = rewrite(scales, codes);
  EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  EXPECT_NE(message.find("'exp_avg'"), std::string::npos) << message;
  EXPECT_NE(message.find("scale 0"), std::string::npos) << message;
  codes[5] = 0x7F;  // E4M3's NaN
  message = rewrite(saved.tensors.at("exp_avg.scales").data, codes);
  EXPECT_NE(message.find("code 127 at element 5"), std::string::npos) << message;
}

}  // namespace
}  // namespace altgrad::train
