#pragma once
// The run directory's logs: metrics.jsonl (one JSON object per logged step) and events.jsonl
// (warnings, evaluation, checkpoints, the stop reason). Lines are flushed as written, so a crash
// loses at most the line being written. JSON has no infinities or NaN: both logs write +∞ and −∞ as
// the strings "inf" and "-inf" (Python's float() reads them) and NaN as null, whoever made the
// line.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace altgrad::monitor {

class RunLog {
 public:
  // Opens both logs for appending. When resuming at `resume_step`, metrics lines of later steps
  // (logged before an interruption) are dropped first, so a resumed run logs each step once.
  RunLog(const std::filesystem::path& run_dir, std::int64_t resume_step = -1);

  void metrics(const nlohmann::json& line);
  void event(const nlohmann::json& line);

 private:
  std::ofstream metrics_;
  std::ofstream events_;
};

}  // namespace altgrad::monitor
