// Warm starts (init_from): with both carry options and the source's recipe, a warm start is the
// source's checkpoint resumed with a fresh step counter; provenance pins the source; every bad
// source is a clear error.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "checkpoint/warm_start.hpp"
#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"
#include "support/thread_count.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

using test_support::mentions;
using test_support::message_of;

const std::string kFp8Hybrid = "[quant]\npreset = \"fp8-hybrid\"\n";

config::TrainConfig fp8_config(const fs::path& corpus) {
  config::TrainConfig c = tiny_config(corpus);  // 8 steps, checkpoints at 4 and 8
  c.quant = config::parse_config(kFp8Hybrid, "test.toml").quant;
  return c;
}

config::TrainConfig warm_from(config::TrainConfig c, const fs::path& source) {
  c.init_from = source.string();
  return c;
}

// Rewrites a checkpoint's state.json as a run that has not taken a step yet.
void reset_step_counter(const fs::path& checkpoint) {
  nlohmann::json state = nlohmann::json::parse(bytes_of(checkpoint / "state.json"));
  state["step"] = 0;
  state["val_loss"] = nullptr;
  state["best_val_loss"] = nullptr;
  state["best_step"] = -1;
  state["grad_norm_history"] = nlohmann::json::array();
  state["last_loss"] = nullptr;
  state["initial_loss"] = nullptr;
  std::ofstream(checkpoint / "state.json") << state.dump();
}

TEST(WarmStart, WithEverythingCarriedItIsTheCheckpointResumedFromStepZero) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = fp8_config(dir.write("corpus.txt", generated_corpus()));
  (void)run(c, dir.path() / "source");
  const TrainOutcome warm = run(warm_from(c, dir.path() / "source"), dir.path() / "warm");

  const fs::path copy = dir.path() / "assembled" / "checkpoints" / "step_0";
  fs::create_directories(copy.parent_path());
  fs::copy(dir.path() / "source" / "checkpoints" / "step_8", copy, fs::copy_options::recursive);
  reset_step_counter(copy);
  const TrainOutcome assembled = run(c, dir.path() / "assembled", /*resume=*/true);

  for (const char* file : {"model.safetensors", "optimizer.safetensors", "quant.safetensors", "state.json"}) {
    EXPECT_EQ(bytes_of(warm.last_checkpoint / file), bytes_of(assembled.last_checkpoint / file)) << file;
  }
  EXPECT_EQ(metrics_without_timing(dir.path() / "warm"), metrics_without_timing(dir.path() / "assembled"));
}

TEST(WarmStart, WithoutCarryingTheOptimizerOrScalingStateTheRunDiffers) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = fp8_config(dir.write("corpus.txt", generated_corpus()));
  (void)run(c, dir.path() / "source");
  const TrainOutcome both = run(warm_from(c, dir.path() / "source"), dir.path() / "both");
  config::TrainConfig no_optimizer = warm_from(c, dir.path() / "source");
  no_optimizer.init_optimizer = false;
  config::TrainConfig no_scaling = warm_from(c, dir.path() / "source");
  no_scaling.init_quant_state = false;
  const TrainOutcome a = run(no_optimizer, dir.path() / "no_optimizer");
  const TrainOutcome b = run(no_scaling, dir.path() / "no_scaling");
  EXPECT_NE(bytes_of(a.last_checkpoint / "optimizer.safetensors"), bytes_of(both.last_checkpoint / "optimizer.safetensors"));
  EXPECT_NE(logged_losses(dir.path() / "no_scaling").front(), logged_losses(dir.path() / "both").front());
  EXPECT_EQ(logged_losses(dir.path() / "no_optimizer").front(), logged_losses(dir.path() / "both").front());
  (void)b;
}

TEST(WarmStart, ProvenanceIsWrittenAndPinsTheSource) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = fp8_config(dir.write("corpus.txt", generated_corpus()));
  (void)run(c, dir.path() / "source");
  (void)run(warm_from(c, dir.path() / "source"), dir.path() / "warm");
  const std::string checksum =
      checkpoint::file_checksum(dir.path() / "source" / "checkpoints" / "step_8" / "model.safetensors");
  const nlohmann::json start = json_lines(dir.path() / "warm" / "events.jsonl").front();
  EXPECT_EQ(start.at("init_from").at("step"), 8);
  EXPECT_EQ(start.at("init_from").at("model_crc32c"), checksum);
  const config::TrainConfig written = config::load_config(dir.path() / "warm" / "config.toml");
  EXPECT_EQ(written.init_from_step, 8);
  EXPECT_EQ(written.init_from_checksum, checksum);

  // The source changes under the pinned config: refused, naming both checksums.
  config::TrainConfig pinned = written;
  pinned.init_from_step = 4;
  EXPECT_TRUE(mentions(message_of<config::ConfigError>([&] { run(pinned, dir.path() / "again"); }),
                       {"init_from", "CRC-32C", checksum, "init_from_checksum"}));
}

TEST(WarmStart, ResumingAWarmStartedRunIsBitIdenticalOnOneAndTwoThreads) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = fp8_config(dir.write("corpus.txt", generated_corpus()));
  (void)run(c, dir.path() / "source");
  const config::TrainConfig warm = warm_from(c, dir.path() / "source");
  const TrainOutcome straight = run(warm, dir.path() / "straight");
  for (const int threads : {1, 2}) {
    const fs::path split = dir.path() / ("split" + std::to_string(threads));
    const TrainOutcome resumed = test_support::with_threads(threads, [&] {
      (void)run_interrupted(warm, split, 3);
      return run(warm, split, /*resume=*/true);
    });
    for (const char* file : {"model.safetensors", "optimizer.safetensors", "quant.safetensors", "state.json"}) {
      EXPECT_EQ(bytes_of(resumed.last_checkpoint / file), bytes_of(straight.last_checkpoint / file)) << file << threads;
    }
    EXPECT_EQ(metrics_without_timing(split), metrics_without_timing(dir.path() / "straight")) << threads;
  }
}

TEST(WarmStart, BadSourcesAreClearErrors) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = fp8_config(dir.write("corpus.txt", generated_corpus()));
  const auto error = [&](const config::TrainConfig& config) {
    return message_of<std::runtime_error>([&] { run(config, dir.path() / "warm"); });
  };
  EXPECT_TRUE(mentions(error(warm_from(c, dir.path() / "missing")), {"init_from", "missing", "no such directory"}));

  (void)run(c, dir.path() / "source");
  const std::string source = "init_from = \"" + (dir.path() / "source").string() + "\"";
  config::TrainConfig wider = warm_from(c, dir.path() / "source");
  wider.n_embd = 64;
  EXPECT_TRUE(mentions(error(wider), {source, "another shape", "n_embd 32 in the checkpoint, 64 in the config"}));
  config::TrainConfig deeper = warm_from(c, dir.path() / "source");
  deeper.n_layer = c.n_layer + 1;
  EXPECT_TRUE(mentions(error(deeper), {source, "n_layer " + std::to_string(c.n_layer) + " in the checkpoint"}));
  config::TrainConfig other_optimizer = warm_from(c, dir.path() / "source");
  other_optimizer.optimizer = config::OptimizerKind::sgd;
  const std::string optimizer_error = error(other_optimizer);
  EXPECT_TRUE(mentions(optimizer_error, {source, "init_optimizer = true", "'adamw'", "init_optimizer = false"}));
  EXPECT_FALSE(mentions(optimizer_error, {"resume this run"})) << optimizer_error;
  // A refused start leaves no run directory behind.
  EXPECT_FALSE(fs::exists(dir.path() / "warm"));
  config::TrainConfig step = warm_from(c, dir.path() / "source");
  step.init_from_step = 6;
  EXPECT_TRUE(mentions(error(step), {"init_from_step = 6", "no checkpoint"}));

  (void)run_interrupted(c, dir.path() / "running", 3);
  EXPECT_TRUE(mentions(error(warm_from(c, dir.path() / "running")), {"init_from", "has not finished", "step_N"}));
  config::TrainConfig from_checkpoint = warm_from(c, dir.path() / "running" / "checkpoints" / "step_3");
  EXPECT_EQ(run(from_checkpoint, dir.path() / "from_checkpoint").steps, 8);  // a checkpoint is complete

  // Code-only weights whose format this build cannot read.
  config::TrainConfig codes = c;
  codes.optimizer = config::OptimizerKind::gridwalk;
  codes.master_weights = false;
  (void)run(codes, dir.path() / "codes");
  const fs::path model = dir.path() / "codes" / "checkpoints" / "step_8" / "model.safetensors";
  std::string bytes = bytes_of(model);
  for (std::size_t at = bytes.find("\"e4m3\""); at != std::string::npos; at = bytes.find("\"e4m3\"", at)) bytes[at + 1] = 'x';
  std::ofstream(model, std::ios::binary) << bytes;
  EXPECT_TRUE(mentions(error(warm_from(c, dir.path() / "codes")), {"x4m3", "is not a format"}));
}

TEST(WarmStart, CodeWeightsLoadAcrossFormatsThroughTheirValues) {
  test_support::ScratchDir dir;
  config::TrainConfig c = fp8_config(dir.write("corpus.txt", generated_corpus()));
  c.optimizer = config::OptimizerKind::gridwalk;
  c.master_weights = false;
  (void)run(c, dir.path() / "e4m3");
  config::TrainConfig e3m4 = warm_from(c, dir.path() / "e4m3");
  e3m4.quant = config::parse_config(kFp8Hybrid + "[quant.weight]\nformat = \"e3m4\"\n", "test.toml").quant;
  e3m4.init_optimizer = false;
  e3m4.max_iters = 1;
  (void)run(e3m4, dir.path() / "e3m4");
  const nlohmann::json start = json_lines(dir.path() / "e3m4" / "events.jsonl").front();
  const nlohmann::json& reencoded = start.at("init_from").at("reencoded");
  ASSERT_FALSE(reencoded.empty());
  for (const auto& t : reencoded) {
    EXPECT_EQ(t.at("from"), "e4m3");
    EXPECT_EQ(t.at("to"), "e3m4");
    EXPECT_EQ(t.at("rounding"), "nearest_even");
    // E3M4 has a mantissa bit more and a binade of normals less: the E4M3 values that change are
    // the small ones below E3M4's normal range, a minority, by less than E4M3's spacing there.
    const auto changed = t.at("values_changed").get<std::size_t>();
    EXPECT_GT(changed, 0u) << t.at("tensor");
    EXPECT_LT(changed, t.at("values").get<std::size_t>() / 5) << t.at("tensor");
    EXPECT_GT(t.at("max_abs_change").get<double>(), 0.0) << t.at("tensor");
  }
}

}  // namespace
}  // namespace altgrad::train
