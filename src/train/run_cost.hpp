#pragma once
// What a result cost (docs/quantization.md, "Cost of a result"): the wall-clock seconds of
// training, kept across resumes through the checkpoint events of events.jsonl; when the
// validation loss first reached target_loss, in steps, tokens and seconds; the peak resident
// memory of the process; and the bytes of the last checkpoint.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

namespace altgrad::train {

class RunClock {
 public:
  // A fresh run starts at 0 seconds; a resumed one at the seconds its checkpoint event of
  // `resume_step` recorded in run_dir's events.jsonl (0 where none did).
  RunClock(const std::filesystem::path& run_dir, std::optional<std::int64_t> resume_step);
  double seconds() const;

 private:
  double before_ = 0;
  std::chrono::steady_clock::time_point started_;
};

// The target event an earlier session of this run wrote at or before `step`, or null.
nlohmann::json earlier_target_event(const std::filesystem::path& run_dir, std::int64_t step);

// The process's peak resident set size in bytes (getrusage), and the bytes of a directory's files.
std::uint64_t peak_rss_bytes();
std::uint64_t directory_bytes(const std::filesystem::path& dir);

}  // namespace altgrad::train
