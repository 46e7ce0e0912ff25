// Precision schedules ([[quant.phase]]): the syntax and its errors, a switch checked against runs
// assembled by hand from a checkpoint and the documented carry-over rule, statistics of a switched
// point recomputed from the checkpoint and the step's batch, and resume inside and across phases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "checkpoint/quant_checkpoint.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "io/safetensors.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "optim/code_weights.hpp"
#include "precision/quant_hooks.hpp"
#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"
#include "support/thread_count.hpp"
#include "train/training_data.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

using test_support::mentions;
using test_support::message_of;

config::TrainConfig with_quant(const fs::path& corpus, const std::string& quant_toml) {
  config::TrainConfig c = tiny_config(corpus);  // 8 steps, checkpoints at 4 and 8, evaluations at 4 and 8
  c.quant = config::parse_config(quant_toml, "test.toml").quant;
  return c;
}

const std::string kFp8 = "[quant]\npreset = \"fp8-hybrid\"\n";
const std::string kFp8E1m6Act = kFp8 + "[quant.act]\nformat = \"e1m6\"\n";
// fp8-hybrid from step 4 on; then E1M6 activations from step 6 on, the rest unchanged.
const std::string kThreePhases = "[quant]\npreset = \"fp32\"\n"
                                 "[[quant.phase]]\nstart = 4\npreset = \"fp8-hybrid\"\n"
                                 "[[quant.phase]]\nstart = 6\n[quant.phase.act]\nformat = \"e1m6\"\n";

// The files a run's state lives in, which a switch must leave exactly as the hand-assembled run does.
void expect_same_checkpoint(const fs::path& a, const fs::path& b) {
  for (const char* file : {"model.safetensors", "optimizer.safetensors", "quant.safetensors", "state.json"}) {
    EXPECT_EQ(bytes_of(a / file), bytes_of(b / file)) << file;
  }
}

// Losses from step `from` on (metrics lines of a scheduled run also carry "phase").
std::vector<double> losses_from(const fs::path& run_dir, std::int64_t from) {
  std::vector<double> out;
  for (const auto& line : json_lines(run_dir / "metrics.jsonl")) {
    if (line.at("step").get<std::int64_t>() >= from) out.push_back(line.at("loss").get<double>());
  }
  return out;
}

// Copies a run's checkpoint of `step` into a new run directory, to be resumed from there.
fs::path copy_checkpoint(const fs::path& run_dir, std::int64_t step, const fs::path& to_run) {
  const fs::path to = to_run / "checkpoints" / ("step_" + std::to_string(step));
  fs::create_directories(to.parent_path());
  fs::copy(run_dir / "checkpoints" / ("step_" + std::to_string(step)), to, fs::copy_options::recursive);
  return to;
}

TEST(ScheduleSyntax, PhasesWithoutAPresetChangeOnlyWhatTheyName) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = with_quant(dir.write("corpus.txt", generated_corpus()),
                                   kFp8 + "[[quant.override]]\nmatch = \"h.*.attn.probs\"\nformat = \"e5m2\"\n"
                                          "[[quant.phase]]\nstart = 3\n[quant.phase.act]\nformat = \"e1m6\"\n"
                                          "[[quant.phase]]\nstart = 5\npreset = \"bf16\"\n");
  const recipe::Schedule s = recipe::resolve_schedule(c);
  ASSERT_EQ(s.phases.size(), 3u);
  EXPECT_EQ(s.phase_at(0), 0u);
  EXPECT_EQ(s.phase_at(2), 0u);
  EXPECT_EQ(s.phase_at(3), 1u);
  EXPECT_EQ(s.phase_at(4), 1u);
  EXPECT_EQ(s.phase_at(5), 2u);
  const model::MatmulPoints points(config::gpt_config(c));
  const auto settings = [&](std::size_t phase, const std::string& name) {
    for (const auto& p : s.phases[phase].recipe.points) {
      if (p.name == name) return p.settings;
    }
    throw std::runtime_error("no point " + name);
  };
  EXPECT_EQ(settings(0, "h.0.mlp.c_fc:act").format_name, "e4m3");
  EXPECT_EQ(settings(1, "h.0.mlp.c_fc:act").format_name, "e1m6");
  EXPECT_EQ(settings(1, "h.0.mlp.c_fc:weight").format_name, "e4m3");  // unchanged: not named
  EXPECT_EQ(settings(1, "h.0.attn.probs").format_name, "e5m2");       // the earlier override still wins
  EXPECT_EQ(settings(2, "h.0.attn.probs").format_name, settings(2, "h.0.mlp.c_fc:act").format_name);  // a fresh bf16
}

TEST(ScheduleSyntax, BadPhasesNameTheirLineKeyAndValue) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  const auto error = [&](const std::string& toml) {
    return message_of<config::ConfigError>([&] { recipe::resolve_schedule(with_quant(corpus, toml)); });
  };
  EXPECT_TRUE(mentions(error(kFp8 + "[[quant.phase]]\nstart = 4\n[[quant.phase]]\nstart = 4\n"),
                       {"test.toml:6", "start = 4", "after the previous phase's start (4)"}));
  EXPECT_TRUE(mentions(error(kFp8 + "[[quant.phase]]\nstart = 0\n"), {"test.toml:4", "start = 0"}));
  EXPECT_TRUE(mentions(error(kFp8 + "[[quant.phase]]\npreset = \"bf16\"\n"), {"test.toml:3", "needs start"}));
  EXPECT_TRUE(mentions(error(kFp8 + "[[quant.phase]]\nstart = 2\nseed = 3\n"),
                       {"test.toml:5", "unknown key 'seed'", "start, preset"}));
  EXPECT_TRUE(mentions(error(kFp8 + "[[quant.phase]]\nstart = 2\npreset = \"fp9\"\n"), {"test.toml:5", "fp9"}));
  EXPECT_TRUE(mentions(error(kFp8 + "phase = 3\n"), {"test.toml:3", "array of tables"}));
}

TEST(Schedule, PhasesOfTheSameRecipeLeaveTheSameCheckpoints) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  const TrainOutcome plain = run(with_quant(corpus, kFp8), dir.path() / "plain");
  const TrainOutcome phased = run(with_quant(corpus, kFp8 + "[[quant.phase]]\nstart = 3\npreset = \"fp8-hybrid\"\n"
                                                            "[[quant.phase]]\nstart = 5\n"),
                                  dir.path() / "phased");
  expect_same_checkpoint(plain.last_checkpoint, phased.last_checkpoint);
  EXPECT_EQ(losses_from(dir.path() / "plain", 1), losses_from(dir.path() / "phased", 1));
}

TEST(Schedule, AFreshSwitchIsTheCheckpointResumedWithTheNewRecipe) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  const config::TrainConfig scheduled = with_quant(corpus, "[quant]\npreset = \"fp32\"\n[[quant.phase]]\nstart = 4\npreset = \"fp8-hybrid\"\n");
  const TrainOutcome switched = run(scheduled, dir.path() / "switched");

  // By hand: FP32 for 4 steps; its checkpoint, with the fp8-hybrid recipe and every delayed
  // point's history empty (scale 1), resumed as a plain fp8-hybrid run. Optimizer state is the
  // checkpoint's.
  (void)run(with_quant(corpus, "[quant]\npreset = \"fp32\"\n"), dir.path() / "fp32");
  const fs::path step4 = copy_checkpoint(dir.path() / "fp32", 4, dir.path() / "assembled");
  const config::TrainConfig fp8 = with_quant(corpus, kFp8);
  const recipe::Recipe recipe = recipe::resolve_recipe(fp8);
  const model::MatmulPoints points(config::gpt_config(fp8));
  const precision::QuantHooks fresh(points, recipe);
  checkpoint::save_quant_state(step4, recipe, &fresh);
  const TrainOutcome assembled = run(fp8, dir.path() / "assembled", /*resume=*/true);

  expect_same_checkpoint(switched.last_checkpoint, assembled.last_checkpoint);
  EXPECT_EQ(losses_from(dir.path() / "switched", 5), losses_from(dir.path() / "assembled", 5));
  const auto events = json_lines(dir.path() / "switched" / "events.jsonl");
  const auto phase = std::find_if(events.begin(), events.end(), [](const auto& e) { return e.at("event") == "phase"; });
  ASSERT_NE(phase, events.end());
  EXPECT_EQ(phase->at("step"), 4);
  EXPECT_EQ(phase->at("phase"), 1);
  EXPECT_TRUE(phase->at("scaling_state").at("kept").empty());
}

// The checkpoint of a plain run at `step` with `recipe`, every :act point's history emptied: what
// the documented rule leaves when only the activation format changes.
void forget_activation_histories(const fs::path& checkpoint, const recipe::Recipe& recipe) {
  const io::SafetensorsFile old = io::read_safetensors(checkpoint / "quant.safetensors");
  std::vector<io::TensorRef> tensors;
  for (const auto& [name, tensor] : old.tensors) {
    const bool act = name.find(":act.") != std::string::npos;
    static const float kOne = 1.0f;
    if (act && name.ends_with(".scale")) {
      tensors.emplace_back(name, tensor.shape, std::span<const float>(&kOne, 1));
    } else {
      tensors.emplace_back(name, act ? std::vector<std::int64_t>{0} : tensor.shape,
                           act ? std::span<const float>() : std::span<const float>(tensor.data));
    }
  }
  io::write_safetensors(checkpoint / "quant.safetensors", tensors);
  checkpoint::write_recipe(checkpoint / "recipe.json", recipe);
}

TEST(Schedule, AChangedFormatStartsAfreshWhileTheOtherPointsKeepTheirHistories) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  const TrainOutcome switched = run(with_quant(corpus, kFp8 + "[[quant.phase]]\nstart = 4\n[quant.phase.act]\nformat = \"e1m6\"\n"),
                                    dir.path() / "switched");
  (void)run(with_quant(corpus, kFp8), dir.path() / "fp8");
  const fs::path step4 = copy_checkpoint(dir.path() / "fp8", 4, dir.path() / "assembled");
  const config::TrainConfig e1m6 = with_quant(corpus, kFp8E1m6Act);
  forget_activation_histories(step4, recipe::resolve_recipe(e1m6));
  const TrainOutcome assembled = run(e1m6, dir.path() / "assembled", /*resume=*/true);

  expect_same_checkpoint(switched.last_checkpoint, assembled.last_checkpoint);
  EXPECT_EQ(losses_from(dir.path() / "switched", 5), losses_from(dir.path() / "assembled", 5));
}

// The first step after a switch, recomputed: the checkpoint of the switch step with the scaling
// state the rule leaves (weights and gradients keep theirs), the step's batch, hooks of the new
// recipe. The logged statistics of every activation point are those of E1M6 at scale 1 (no
// history yet), not those the old E4M3 recipe gives.
TEST(Schedule, ASwitchedPointsStatisticsAreThoseOfTheNewGrid) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  config::TrainConfig c = with_quant(corpus, kFp8 + "[[quant.phase]]\nstart = 4\n[quant.phase.act]\nformat = \"e1m6\"\n");
  c.log_interval = 1;
  (void)run(c, dir.path() / "run");
  const nlohmann::json logged = json_lines(dir.path() / "run" / "metrics.jsonl").at(4).at("quant");  // step 5

  const auto recompute = [&](const std::string& quant_toml) {
    const config::TrainConfig phase = with_quant(corpus, quant_toml);
    const fs::path step4 = copy_checkpoint(dir.path() / "run", 4, dir.path() / ("recompute" + std::to_string(quant_toml.size())));
    forget_activation_histories(step4, recipe::resolve_recipe(phase));
    model::Gpt<float> gpt(config::gpt_config(phase));
    (void)checkpoint::load_model(step4, gpt);
    precision::QuantHooks hooks(gpt.matmuls(), recipe::resolve_recipe(phase));
    checkpoint::load_quant_state(step4, hooks);
    model::Activations<float> acts(gpt.config(), phase.batch_size, phase.block_size, model::OperandCopies::allocated);
    const data::ByteDataset data = load_training_data(phase, ".");
    std::vector<std::int32_t> x(static_cast<std::size_t>(phase.batch_size * phase.block_size)), y(x.size());
    data.get_batch(data::BatchKey::training(4, 0), phase.batch_size, phase.block_size, x, y);
    hooks.begin_step(4, false);
    (void)model::gpt_forward(gpt, acts, x, y, &hooks);
    return hooks;
  };
  const precision::QuantHooks now = recompute(kFp8E1m6Act);
  const precision::QuantHooks before = recompute(kFp8);
  int checked = 0;
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (!now.point(i) || !now.name(i).ends_with(":act")) continue;
    const quant::PointStats& s = now.point(i)->step_stats();
    const nlohmann::json& point = logged.at(now.name(i));
    EXPECT_EQ(point.at("amax").get<double>(), s.values.amax) << now.name(i);
    EXPECT_EQ(point.at("scale").get<double>(), 1.0) << now.name(i);
    EXPECT_DOUBLE_EQ(point.at("rel_error").get<double>(), s.values.relative_error()) << now.name(i);
    EXPECT_NE(point.at("rel_error").get<double>(), before.point(i)->step_stats().values.relative_error()) << now.name(i);
    ++checked;
  }
  EXPECT_EQ(checked, 8);  // c_attn, c_proj, c_fc, mlp c_proj inputs of both blocks
}

TEST(Schedule, ResumeInsideEachPhaseAndAtEachSwitchIsBitIdenticalOnOneAndTwoThreads) {
  test_support::ScratchDir dir;
  const config::TrainConfig c = with_quant(dir.write("corpus.txt", generated_corpus()), kThreePhases);
  const TrainOutcome straight = test_support::with_threads(2, [&] { return run(c, dir.path() / "straight"); });
  for (const int threads : {1, 2}) {
    for (const int stop : {2, 4, 5, 6, 7}) {  // phase 0, the first switch, phase 1, the second switch, phase 2
      const fs::path split = dir.path() / ("split_" + std::to_string(threads) + "_" + std::to_string(stop));
      const TrainOutcome resumed = test_support::with_threads(threads, [&] {
        (void)run_interrupted(c, split, stop);
        return run(c, split, /*resume=*/true);
      });
      SCOPED_TRACE("threads " + std::to_string(threads) + ", stopped after step " + std::to_string(stop));
      for (const char* file : {"model.safetensors", "optimizer.safetensors", "quant.safetensors", "state.json"}) {
        EXPECT_EQ(bytes_of(resumed.last_checkpoint / file), bytes_of(straight.last_checkpoint / file)) << file;
      }
      EXPECT_EQ(metrics_without_timing(split), metrics_without_timing(dir.path() / "straight"));
    }
  }
}

// Code-only weights whose grid changes format at a switch are encoded again from their values by
// round to nearest even under a new code scale; the phase event reports how many values moved, as
// recomputed here from the switch step's checkpoint. Resume across the switch stays bit-identical.
TEST(Schedule, CodeOnlyWeightsAreReencodedOnTheNewGridAtASwitch) {
  test_support::ScratchDir dir;
  config::TrainConfig c = with_quant(dir.write("corpus.txt", generated_corpus()),
                             kFp8 + "[[quant.phase]]\nstart = 4\n[quant.phase.weight]\nformat = \"e3m4\"\n");
  c.optimizer = config::OptimizerKind::gridwalk;
  c.master_weights = false;
  const TrainOutcome straight = run(c, dir.path() / "straight");
  nlohmann::json event;
  for (const auto& e : json_lines(dir.path() / "straight" / "events.jsonl")) {
    if (e.at("event") == "phase") event = e;
  }
  ASSERT_FALSE(event.is_null());
  const nlohmann::json& reencoded = event.at("reencoded");
  ASSERT_FALSE(reencoded.empty());

  model::Gpt<float> gpt(config::gpt_config(c));
  (void)checkpoint::load_model(dir.path() / "straight" / "checkpoints" / "step_4", gpt);
  const format::Format e3m4 = format::make_format(format::parse_format("e3m4"));
  for (const auto& t : reencoded) {
    EXPECT_EQ(t.at("from"), "e4m3");
    EXPECT_EQ(t.at("to"), "e3m4");
    EXPECT_EQ(t.at("rounding"), "nearest_even");
    const std::span<const float> values = gpt.parameter(t.at("tensor").get<std::string>());
    float amax = 0;
    for (const float v : values) amax = std::max(amax, std::fabs(v));
    const float scale = optim::code_scale(e3m4, amax, c.code_headroom);
    std::size_t changed = 0;
    for (const float v : values) {
      const float q = format::decode(e3m4, format::encode(e3m4, format::Rounding::nearest_even, v * scale)) / scale;
      changed += q != v;
    }
    EXPECT_EQ(t.at("values_changed").get<std::size_t>(), changed) << t.at("tensor");
  }
  const fs::path split = dir.path() / "split";
  (void)run_interrupted(c, split, 4);
  const TrainOutcome resumed = run(c, split, /*resume=*/true);
  for (const char* file : {"model.safetensors", "optimizer.safetensors", "quant.safetensors", "state.json"}) {
    EXPECT_EQ(bytes_of(resumed.last_checkpoint / file), bytes_of(straight.last_checkpoint / file)) << file;
  }
}

TEST(Schedule, MetricsAndEventsRecordThePhases) {
  test_support::ScratchDir dir;
  config::TrainConfig c = with_quant(dir.write("corpus.txt", generated_corpus()), kThreePhases);
  c.log_interval = 3;  // steps 3 and 6, the evaluations at 4 and 8, and each phase's last step
  (void)run(c, dir.path() / "run");
  std::vector<std::pair<std::int64_t, std::int64_t>> steps;
  for (const auto& line : json_lines(dir.path() / "run" / "metrics.jsonl")) {
    steps.emplace_back(line.at("step").get<std::int64_t>(), line.at("phase").get<std::int64_t>());
  }
  const std::vector<std::pair<std::int64_t, std::int64_t>> expected = {{3, 0}, {4, 0}, {6, 1}, {8, 2}};
  EXPECT_EQ(steps, expected);
  int switches = 0;
  for (const auto& e : json_lines(dir.path() / "run" / "events.jsonl")) {
    if (e.at("event") == "start") {
      EXPECT_EQ(e.at("phases"), 3);
    }
    if (e.at("event") != "phase") continue;
    ++switches;
    EXPECT_EQ(e.at("step"), switches == 1 ? 4 : 6);
  }
  EXPECT_EQ(switches, 2);
}

}  // namespace
}  // namespace altgrad::train
