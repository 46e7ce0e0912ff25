#pragma once
// Small training runs for the trainer tests: a generated corpus with structure a tiny model can
// learn, a tiny config, and readers of what a run leaves behind.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "model/gpt.hpp"
#include "train/trainer.hpp"

namespace altgrad::train_test {

namespace fs = std::filesystem;

// A few kilobytes of text with structure a tiny model can learn: words from a small vocabulary.
inline std::string generated_corpus() {
  const std::vector<std::string> words = {"the", "court", "shall", "decide", "on", "appeal", "of", "a", "party", "within"};
  std::string text;
  std::uint32_t state = 12345;
  while (text.size() < 40'000) {
    state = state * 1664525u + 1013904223u;
    text += words[(state >> 16) % words.size()];
    text += (state >> 8) % 7 == 0 ? ".\n" : " ";
  }
  return text;
}

inline config::TrainConfig tiny_config(const fs::path& corpus) {
  config::TrainConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 32;
  c.block_size = 32;
  c.batch_size = 4;
  c.max_iters = 8;
  c.lr_decay_iters = 8;
  c.warmup_iters = 2;
  c.eval_interval = 4;
  c.eval_iters = 2;
  c.log_interval = 1;
  c.checkpoint_interval = 4;
  c.keep_checkpoints = 0;
  c.data = corpus.string();
  return c;
}

inline std::vector<double> logged_losses(const fs::path& run_dir) {
  std::vector<double> losses;
  std::ifstream in(run_dir / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) losses.push_back(nlohmann::json::parse(line).at("loss").get<double>());
  return losses;
}

inline std::vector<float> final_parameters(const fs::path& checkpoint) {
  model::Gpt<float> gpt(checkpoint::load_checkpoint_config(checkpoint));
  checkpoint::load_model(checkpoint, gpt);
  return {gpt.parameters().begin(), gpt.parameters().end()};
}

inline train::TrainOutcome run(const config::TrainConfig& config, const fs::path& run_dir, bool resume = false) {
  train::TrainOptions options;
  options.run_dir = run_dir;
  options.resume = resume;
  return train::train(config, options);
}

// Trains with an interruption (as SIGTERM interrupts `altgrad train`) that answers after
// `after_steps` step boundaries: the run checkpoints that step and ends, to be resumed.
inline train::TrainOutcome run_interrupted(const config::TrainConfig& config, const fs::path& run_dir,
                                           int after_steps) {
  train::TrainOptions options;
  options.run_dir = run_dir;
  int boundaries = 0;
  options.interruption = [&]() -> std::optional<std::string> {
    if (++boundaries >= after_steps) return "a test";
    return std::nullopt;
  };
  return train::train(config, options);
}

// Every line of a run's metrics.jsonl or events.jsonl.
inline std::vector<nlohmann::json> json_lines(const std::filesystem::path& file) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// A file's bytes; a file that cannot be read throws, so two missing files never compare equal.
inline std::string bytes_of(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// metrics.jsonl without the wall-clock field, which differs between any two runs.
inline std::vector<nlohmann::json> metrics_without_timing(const std::filesystem::path& run_dir) {
  auto lines = json_lines(run_dir / "metrics.jsonl");
  for (auto& line : lines) line.erase("tokens_per_s");
  return lines;
}

}  // namespace altgrad::train_test
