#pragma once
// Warnings: a threshold crossed at a point or layer. Each goes to events.jsonl and the terminal;
// the same kind at the same place repeats at most once every `every` steps, so a format that
// overflows on every step does not bury the log.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "monitor/run_log.hpp"

namespace altgrad::monitor {

// A number as warning messages show it: three significant digits (10.6, 0.00087, 1.2e+03).
std::string short_number(double value);

class Warnings {
 public:
  using Printer = std::function<void(const std::string&)>;
  Warnings(RunLog& log, Printer print, std::int64_t every) : log_(log), print_(std::move(print)), every_(every) {}

  // kind: "overflow", "kurtosis", ...; where: a point or layer name ("" for the whole model).
  void warn(std::int64_t step, std::string_view kind, std::string_view where, double value, double threshold,
            std::string_view message);

  // A statistic past its threshold that is expected at start-up, and so not a warning: delayed
  // scaling's first step, whose scale is 1 for want of an amax history. It goes to events.jsonl as
  // {"event": "start_up", "kind": kind, ...}, each time, and not to the terminal.
  void start_up(std::int64_t step, std::string_view kind, std::string_view where, std::string_view statistic,
                double value, std::string_view message);

  std::uint64_t emitted() const { return emitted_; }
  std::uint64_t suppressed() const { return suppressed_; }

 private:
  RunLog& log_;
  Printer print_;
  std::int64_t every_;
  std::map<std::string, std::int64_t, std::less<>> last_step_;  // "kind@where" → step last emitted
  std::uint64_t emitted_ = 0;
  std::uint64_t suppressed_ = 0;
};

}  // namespace altgrad::monitor
