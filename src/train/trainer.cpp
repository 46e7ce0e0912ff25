#include "train/trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "optim/adamw.hpp"
#include "optim/schedule.hpp"
#include "train/checkpoint.hpp"
#include "train/run_log.hpp"
#include "train/training_data.hpp"

namespace altgrad::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::vector<optim::ParameterRange> decay_ranges(const model::ParameterLayout& layout) {
  std::vector<optim::ParameterRange> ranges;
  for (const auto& spec : layout.tensors()) {
    // nanoGPT decays every tensor of two or more dimensions: embeddings and Linear weights.
    ranges.push_back({spec.slot.offset, spec.slot.size, spec.shape.size() >= 2});
  }
  return ranges;
}

optim::CosineSchedule schedule_of(const TrainConfig& c) {
  return {c.learning_rate, c.min_lr, static_cast<int>(c.warmup_iters), static_cast<int>(c.lr_decay_iters)};
}

// Everything one run holds, allocated once before the loop.
struct Session {
  const TrainConfig& config;
  model::Gpt<float> model;
  model::Activations<float> acts;
  optim::AdamW optimizer;
  ByteDataset data;
  std::vector<std::int32_t> x, y;

  Session(const TrainConfig& c, const fs::path& repo_root)
      : config(c),
        model(gpt_config(c)),
        acts(model.config(), static_cast<std::size_t>(c.batch_size), static_cast<std::size_t>(c.block_size)),
        optimizer(model.layout().size(),
                  optim::AdamWConfig{static_cast<float>(c.beta1), static_cast<float>(c.beta2), 1e-8f,
                                     static_cast<float>(c.weight_decay)},
                  decay_ranges(model.layout())),
        data(load_training_data(c, repo_root)),
        x(static_cast<std::size_t>(c.batch_size * c.block_size)),
        y(x.size()) {}

  float forward(const BatchKey& key) {
    data.get_batch(key, config.batch_size, config.block_size, x, y);
    return model::gpt_forward(model, acts, x, y);
  }

  double evaluate() {
    double sum = 0.0;
    for (int i = 0; i < config.eval_iters; ++i) sum += forward(BatchKey::evaluation(Split::val, static_cast<std::uint64_t>(i)));
    return sum / config.eval_iters;
  }
};

class Progress {
 public:
  Progress(const TrainOptions& o, std::int64_t total) : out_(o.progress), terminal_(o.terminal), total_(total) {}

  void step(std::int64_t step, double loss, double lr, double tokens_per_s, double seconds_left) {
    if (!out_) return;
    char line[160];
    std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  lr %.2e  %.0f tok/s  ETA %s",
                  static_cast<long long>(step), static_cast<long long>(total_), loss, lr, tokens_per_s,
                  eta(seconds_left).c_str());
    if (terminal_) {
      *out_ << '\r' << line << "\033[K" << std::flush;
    } else {
      *out_ << line << '\n' << std::flush;
    }
  }

  void note(const std::string& text) {
    if (!out_) return;
    if (terminal_) *out_ << '\r' << "\033[K";
    *out_ << text << '\n' << std::flush;
  }

 private:
  static std::string eta(double seconds) {
    char buf[32];
    const long s = static_cast<long>(seconds + 0.5);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
    return buf;
  }
  std::ostream* out_;
  bool terminal_;
  std::int64_t total_;
};

}  // namespace

model::GptConfig gpt_config(const TrainConfig& c) {
  model::GptConfig g;
  g.n_layer = static_cast<std::size_t>(c.n_layer);
  g.n_head = static_cast<std::size_t>(c.n_head);
  g.n_embd = static_cast<std::size_t>(c.n_embd);
  g.block_size = static_cast<std::size_t>(c.block_size);
  g.vocab_size = 256;
  g.bias = c.bias;
  g.norm = c.norm;
  g.mlp = c.mlp;
  g.mlp_hidden = static_cast<std::size_t>(c.mlp_hidden);
  model::validate(g);
  g.mlp_hidden = model::hidden_size(g);  // resolved, as checkpoints store it
  return g;
}

TrainOutcome train(const TrainConfig& config, const TrainOptions& options) {
  const fs::path& run_dir = options.run_dir;
  fs::create_directories(run_dir);
  Session s(config, options.repo_root);
  CheckpointState state{0, config.seed, std::nan(""), std::numeric_limits<double>::infinity(), -1};
  if (options.resume) {
    const fs::path from = resolve_checkpoint(run_dir);
    if (load_checkpoint_config(from) != s.model.config()) {
      throw CheckpointError(from.string() + ": the checkpoint's model config differs from the run's config.toml");
    }
    load_model(from, s.model);
    load_optimizer(from, s.optimizer);
    state = load_state(from);
  } else {
    s.model.initialize(config.seed);
  }
  write_config(run_dir / "config.toml", config);
  RunLog log(run_dir, options.resume ? state.step : -1);
  Progress progress(options, config.max_iters);
  const optim::CosineSchedule schedule = schedule_of(config);
  const int accumulation = config.gradient_accumulation_steps;
  const double tokens_per_step = static_cast<double>(config.batch_size) * config.block_size * accumulation;
  log.event({{"event", options.resume ? "resume" : "start"}, {"step", state.step},
             {"parameters", s.model.layout().size()}});

  TrainOutcome outcome{run_dir, {}, state.step, std::nan(""), "completed"};
  const auto started = Clock::now();
  const std::int64_t first_step = state.step;
  for (std::int64_t step = state.step; step < config.max_iters; ++step) {
    const auto t0 = Clock::now();
    const double lr = schedule.at(static_cast<int>(step));
    s.model.zero_gradients();
    double loss = 0.0;
    for (int micro = 0; micro < accumulation; ++micro) {
      loss += s.forward(BatchKey::training(static_cast<std::uint64_t>(step), static_cast<std::uint32_t>(micro)));
      model::gpt_backward(s.model, s.acts);
    }
    loss /= accumulation;
    if (accumulation > 1) {
      const float inverse = 1.0f / static_cast<float>(accumulation);
      for (float& g : s.model.gradients()) g *= inverse;
    }
    const double grad_norm = optim::clip_grad_norm(s.model.gradients(), config.grad_clip);
    if (!std::isfinite(loss) || !std::isfinite(grad_norm)) {
      outcome.stop_reason = !std::isfinite(loss) ? "non-finite loss at step " + std::to_string(step)
                                                 : "non-finite gradient norm at step " + std::to_string(step);
      log.event({{"event", "stop"}, {"step", step}, {"reason", outcome.stop_reason}});
      progress.note("stopped: " + outcome.stop_reason + " (the last good checkpoint is kept)");
      break;
    }
    s.optimizer.step(s.model.parameters(), s.model.gradients(), static_cast<float>(lr));
    const std::int64_t done = step + 1;
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const double tokens_per_s = tokens_per_step / seconds;
    nlohmann::json metrics = {{"step", done}, {"loss", loss}, {"lr", lr}, {"grad_norm", grad_norm},
                              {"tokens_per_s", tokens_per_s}};

    const bool last = done == config.max_iters;
    if (done % config.eval_interval == 0 || last) {
      state.val_loss = s.evaluate();
      metrics["val_loss"] = state.val_loss;
      metrics["val_perplexity"] = std::exp(state.val_loss);
      if (state.val_loss < state.best_val_loss) {
        state.best_val_loss = state.val_loss;
        state.best_step = done;
      }
      outcome.final_val_loss = state.val_loss;
      char line[96];
      std::snprintf(line, sizeof line, "step %lld: val loss %.4f (perplexity %.2f)", static_cast<long long>(done),
                    state.val_loss, std::exp(state.val_loss));
      progress.note(line);
    } else {
      state.val_loss = std::nan("");
    }
    if (done % config.log_interval == 0 || last || metrics.contains("val_loss")) log.metrics(metrics);
    state.step = done;
    const bool checkpoint_due = config.checkpoint_interval > 0 && done % config.checkpoint_interval == 0;
    if (checkpoint_due || last || done == state.best_step) {
      outcome.last_checkpoint = save_checkpoint(run_dir, s.model, s.optimizer, state);
      prune_checkpoints(run_dir, config.keep_checkpoints, state.best_step);
      log.event({{"event", "checkpoint"}, {"step", done}, {"path", outcome.last_checkpoint.string()}});
    }
    outcome.steps = done;
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    const double per_step = elapsed / static_cast<double>(done - first_step);
    // A terminal gets a line redrawn every step; a log file one line per log_interval.
    if (options.terminal || done % config.log_interval == 0 || last) {
      progress.step(done, loss, lr, tokens_per_s, per_step * static_cast<double>(config.max_iters - done));
    }
  }
  log.event({{"event", "end"}, {"step", outcome.steps}, {"reason", outcome.stop_reason}});
  return outcome;
}

}  // namespace altgrad::train
