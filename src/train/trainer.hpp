#pragma once
// The training loop: the configured optimizer (AdamW by default) with nanoGPT's schedule, gradient accumulation and clipping, periodic
// evaluation and checkpoints, metrics and events in the run directory, bit-identical resume.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "config/config.hpp"
#include "model/config.hpp"
#include "optim/memory_footprint.hpp"
#include "train/passes_device.hpp"

namespace altgrad::train {

struct TrainOptions {
  std::filesystem::path run_dir;
  bool resume = false;                  // continue from run_dir's latest checkpoint
  std::filesystem::path repo_root = ".";  // where the default corpus lives
  std::ostream* progress = nullptr;     // progress output (none when null)
  bool terminal = false;                // redraw one progress line instead of printing lines
  // Makes the operand at this quantization point NaN in this step (`--inject-nan POINT@STEP`),
  // to exercise the non-finite stop path. Steps count from 1, as in metrics and checkpoints.
  std::optional<std::pair<std::string, std::int64_t>> inject_nan;
  // Asked at every step boundary: a cause (e.g. "SIGTERM") stops the run there, after a checkpoint
  // of that step, so that `resume` continues it bit-identically. None when it returns nothing.
  std::function<std::optional<std::string>()> interruption;
  // Where the forward and backward passes run, in place of the config's `device`: for tests, which
  // run a device run's path on a backend whose memory the host cannot touch.
  std::optional<PassesDevice> passes_device;
};

struct TrainOutcome {
  std::filesystem::path run_dir;
  std::filesystem::path last_checkpoint;
  std::int64_t steps = 0;        // optimizer steps completed
  double final_val_loss = 0.0;   // NaN if never evaluated
  std::string stop_reason;       // "completed", or why the run stopped early
  std::uint64_t warnings = 0;    // warnings written to events.jsonl
  bool interrupted = false;      // stopped by `interruption` with a checkpoint to resume from
  std::size_t parameters = 0;
  optim::MemoryFootprint memory;  // bytes of weights and optimizer state (also the end event's "memory")
};

// Trains as `config` says, quantizing as its [quant] recipe says. Throws ConfigError, DataError,
// CheckpointError or FileError on bad input; a non-finite loss or gradient is not an exception but
// a stop reason naming the first quantization point or layer that held a NaN or Inf, with the last
// good checkpoint left in place.
TrainOutcome train(const config::TrainConfig& config, const TrainOptions& options);

}  // namespace altgrad::train
