#include "monitor/run_log.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "io/atomic_file.hpp"
#include "io/run_directory.hpp"


namespace altgrad::monitor {
namespace {

void keep_steps_up_to(const std::filesystem::path& path, std::int64_t last_step) {
  std::ifstream in(path);
  if (!in) return;
  std::ostringstream kept;
  std::string line;
  while (std::getline(in, line)) {
    const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.value("step", std::int64_t{0}) <= last_step) kept << line << '\n';
  }
  io::write_file_atomically(path, [&](std::ostream& out) { out << kept.str(); });
}

// Replaces every non-finite number in `value`, at any depth, as run_log.hpp says.
void replace_non_finite(nlohmann::json& value) {
  if (value.is_structured()) {
    for (auto& element : value) replace_non_finite(element);
  } else if (value.is_number_float()) {
    const double x = value.get<double>();
    if (std::isnan(x)) value = nullptr;
    if (std::isinf(x)) value = x > 0 ? "inf" : "-inf";
  }
}

// The line as written: one copy, non-finite numbers replaced.
std::string json_line(nlohmann::json line) {
  replace_non_finite(line);
  return line.dump();
}

std::ofstream open_append(const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::app);
  if (!out) throw io::FileError("cannot open " + path.string() + " for writing");
  return out;
}

}  // namespace

RunLog::RunLog(const std::filesystem::path& run_dir, std::int64_t resume_step) {
  std::filesystem::create_directories(run_dir);
  if (resume_step >= 0) keep_steps_up_to(run_dir / io::run_directory::kMetrics, resume_step);
  metrics_ = open_append(run_dir / io::run_directory::kMetrics);
  events_ = open_append(run_dir / io::run_directory::kEvents);
}

void RunLog::metrics(const nlohmann::json& line) { metrics_ << json_line(line) << std::endl; }
void RunLog::event(const nlohmann::json& line) { events_ << json_line(line) << std::endl; }

}  // namespace altgrad::monitor
