#include "train/run_log.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "io/atomic_file.hpp"

namespace altgrad::train {
namespace {

void keep_steps_up_to(const std::filesystem::path& path, std::int64_t last_step) {
  std::ifstream in(path);
  if (!in) return;
  std::ostringstream kept;
  std::string line;
  while (std::getline(in, line)) {
    const auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_object() && json.value("step", std::int64_t{0}) <= last_step) kept << line << '\n';
  }
  io::write_file_atomically(path, [&](std::ostream& out) { out << kept.str(); });
}

// The line with every non-finite number replaced as run_log.hpp says.
nlohmann::json with_json_numbers(const nlohmann::json& value) {
  if (value.is_number_float()) {
    const double x = value.get<double>();
    if (std::isnan(x)) return nullptr;
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    return value;
  }
  if (!value.is_structured()) return value;
  nlohmann::json out = value;
  for (auto& element : out) element = with_json_numbers(element);
  return out;
}

std::ofstream open_append(const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::app);
  if (!out) throw io::FileError("cannot open " + path.string() + " for writing");
  return out;
}

}  // namespace

RunLog::RunLog(const std::filesystem::path& run_dir, std::int64_t resume_step) {
  std::filesystem::create_directories(run_dir);
  if (resume_step >= 0) keep_steps_up_to(run_dir / "metrics.jsonl", resume_step);
  metrics_ = open_append(run_dir / "metrics.jsonl");
  events_ = open_append(run_dir / "events.jsonl");
}

void RunLog::metrics(const nlohmann::json& line) { metrics_ << with_json_numbers(line).dump() << std::endl; }
void RunLog::event(const nlohmann::json& line) { events_ << with_json_numbers(line).dump() << std::endl; }

}  // namespace altgrad::train
