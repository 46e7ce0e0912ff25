#include "sweep/run_state.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/run_directory.hpp"

namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;

// Each complete JSON line of a log; a line cut short by a kill is skipped.
template <typename Visit>
void each_line(const fs::path& path, Visit visit) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) visit(j);
  }
}

}  // namespace

const char* status_name(RunStatus status) {
  switch (status) {
    case RunStatus::pending: return "pending";
    case RunStatus::unfinished: return "unfinished";
    case RunStatus::completed: return "completed";
    case RunStatus::stopped: return "stopped";
  }
  return "?";
}

RunState read_run_state(const fs::path& run_dir) {
  RunState state;
  state.val_loss = std::nan("");
  if (!fs::exists(run_dir / io::run_directory::kMetrics)) return state;
  state.status = RunStatus::unfinished;
  each_line(run_dir / io::run_directory::kMetrics, [&](const nlohmann::json& m) {
    if (m.contains("step")) state.step = m["step"].get<std::int64_t>();
    if (m.contains("val_loss") && m["val_loss"].is_number()) state.val_loss = m["val_loss"].get<double>();
  });
  // A resumed run logs "resume" after an interrupted attempt; only an "end" closes the run, and not
  // one marked interrupted (SIGTERM: a checkpoint was written for --resume to continue from).
  each_line(run_dir / io::run_directory::kEvents, [&](const nlohmann::json& e) {
    const std::string kind = e.value(io::run_directory::kEventKey, "");
    if (kind == io::run_directory::kResumeEvent || kind == io::run_directory::kStartEvent) {
      state.status = RunStatus::unfinished;
      state.stop_reason.clear();
    } else if (kind == io::run_directory::kEndEvent && !e.value(io::run_directory::kInterruptedKey, false)) {
      state.stop_reason = e.value(io::run_directory::kReasonKey, "");
      state.status = state.stop_reason == io::run_directory::kCompleted ? RunStatus::completed : RunStatus::stopped;
    }
  });
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir / io::run_directory::kCheckpoints, ec)) {
    if (entry.path().filename().string().starts_with(io::run_directory::kCheckpointPrefix)) state.has_checkpoint = true;
  }
  return state;
}

}  // namespace altgrad::sweep
