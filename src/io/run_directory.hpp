#pragma once
// The names in run and sweep directories, in one place: the trainer writes them, and sweep/,
// report/ and the Slurm task script (sweep/slurm_script.cpp, whose shell variables are generated
// from them) read them. docs/experiments.md ("The sweep directory") describes the layout.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace altgrad::io::run_directory {

inline constexpr std::string_view kConfig = "config.toml";
inline constexpr std::string_view kMetrics = "metrics.jsonl";
inline constexpr std::string_view kEvents = "events.jsonl";
inline constexpr std::string_view kTrainLog = "train.log";  // the output of a sweep's run
inline constexpr std::string_view kCheckpoints = "checkpoints";
inline constexpr std::string_view kCheckpointPrefix = "step_";  // checkpoints/step_<N>/

// The files of one checkpoint folder.
inline constexpr std::string_view kModel = "model.safetensors";
inline constexpr std::string_view kModelConfig = "config.json";  // the model's shape, nanoGPT's keys
inline constexpr std::string_view kOptimizer = "optimizer.safetensors";
inline constexpr std::string_view kState = "state.json";
inline constexpr std::string_view kQuant = "quant.safetensors";

// events.jsonl: every line's "event" names its kind. A run that ends writes an "end" event whose
// "reason" is "completed" or why it stopped; an end by SIGTERM also has "interrupted": true, and
// the run continues from its last checkpoint.
inline constexpr std::string_view kEventKey = "event";
inline constexpr std::string_view kStartEvent = "start";
inline constexpr std::string_view kResumeEvent = "resume";
inline constexpr std::string_view kStopEvent = "stop";
inline constexpr std::string_view kEndEvent = "end";
// A statistic past its threshold that start-up explains (monitor/warnings.hpp): not a warning.
inline constexpr std::string_view kStartUpEvent = "start_up";
inline constexpr std::string_view kReasonKey = "reason";
inline constexpr std::string_view kInterruptedKey = "interrupted";
inline constexpr std::string_view kCompleted = "completed";

inline std::filesystem::path checkpoint_dir(const std::filesystem::path& run_dir, std::int64_t step) {
  return run_dir / kCheckpoints / (std::string(kCheckpointPrefix) + std::to_string(step));
}

}  // namespace altgrad::io::run_directory

namespace altgrad::io::sweep_directory {

inline constexpr std::string_view kRuns = "runs";  // runs/<run name>/, one run directory each
inline constexpr std::string_view kIndex = "index.json";
inline constexpr std::string_view kRunsKey = "runs";  // index.json's list of the sweep's runs

}  // namespace altgrad::io::sweep_directory
