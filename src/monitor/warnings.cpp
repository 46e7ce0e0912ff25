#include "monitor/warnings.hpp"

#include <cstdio>

#include "io/run_directory.hpp"

namespace altgrad::monitor {

std::string short_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

void Warnings::warn(std::int64_t step, std::string_view kind, std::string_view where, double value,
                    double threshold, std::string_view message) {
  const std::string key = std::string(kind) + "@" + std::string(where);
  const auto last = last_step_.find(key);
  if (last != last_step_.end() && step - last->second < every_) {
    ++suppressed_;
    return;
  }
  last_step_.insert_or_assign(key, step);
  ++emitted_;
  log_.event({{"event", "warning"}, {"step", step}, {"kind", kind}, {"where", where}, {"value", value},
              {"threshold", threshold}, {"message", message}});
  if (print_) print_("warning at step " + std::to_string(step) + ": " + std::string(message));
}

void Warnings::start_up(std::int64_t step, std::string_view kind, std::string_view where, std::string_view statistic,
                        double value, std::string_view message) {
  log_.event({{io::run_directory::kEventKey, io::run_directory::kStartUpEvent}, {"step", step}, {"kind", kind}, {"where", where}, {"statistic", statistic},
              {"value", value}, {"message", message}});
}

}  // namespace altgrad::monitor
