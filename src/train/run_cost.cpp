#include "train/run_cost.hpp"

#include <sys/resource.h>

#include <fstream>
#include <string>

#include "io/run_directory.hpp"

namespace altgrad::train {
namespace {

namespace fs = std::filesystem;

// Every event of run_dir's events.jsonl for which `visit` is called, in order; lines that are not
// JSON objects (a line cut by a crash) are skipped.
template <typename Visit>
void for_each_event(const fs::path& run_dir, Visit visit) {
  std::ifstream in(run_dir / io::run_directory::kEvents);
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (event.is_object()) visit(event);
  }
}

}  // namespace

RunClock::RunClock(const fs::path& run_dir, std::optional<std::int64_t> resume_step)
    : started_(std::chrono::steady_clock::now()) {
  if (!resume_step) return;
  for_each_event(run_dir, [&](const nlohmann::json& e) {
    if (e.value("event", "") == "checkpoint" && e.value("step", std::int64_t{-1}) == *resume_step) {
      before_ = e.value("train_seconds", 0.0);
    }
  });
}

double RunClock::seconds() const {
  return before_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

nlohmann::json earlier_target_event(const fs::path& run_dir, std::int64_t step) {
  nlohmann::json found;
  for_each_event(run_dir, [&](const nlohmann::json& e) {
    if (found.is_null() && e.value("event", "") == "target" && e.value("step", step + 1) <= step) found = e;
  });
  return found;
}

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

std::uint64_t directory_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) total += entry.file_size(ec);
  }
  return total;
}

}  // namespace altgrad::train
