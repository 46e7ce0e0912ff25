#pragma once
// Collects mismatches from loops over thousands of inputs: the first few are reported in full (as
// reproductions: format, mode, input bits, expected, got), the rest are counted, so one bug does
// not bury the log under a million lines.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace altgrad::format_test {

inline std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", v);
  return buf;
}

inline std::uint32_t bits_of(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

inline float float_of(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// "1.5 (0x3FC00000)": the value for people, the bits for reproduction.
inline std::string describe(float x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g (0x%08X)", static_cast<double>(x), bits_of(x));
  return buf;
}

inline std::string describe(long double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.21Lg", x);
  return buf;
}

class MismatchLog {
 public:
  explicit MismatchLog(std::string what, int reported = 10) : what_(std::move(what)), reported_(reported) {}
  MismatchLog(const MismatchLog&) = delete;
  MismatchLog& operator=(const MismatchLog&) = delete;
  ~MismatchLog() {
    if (count_ > reported_)
      ADD_FAILURE() << what_ << ": " << count_ << " mismatches in all, first " << reported_ << " shown";
  }

  void add(const std::string& detail) {
    if (++count_ <= reported_) ADD_FAILURE() << what_ << ": " << detail;
  }
  long count() const { return count_; }

 private:
  std::string what_;
  int reported_;
  long count_ = 0;
};

}  // namespace altgrad::format_test
