#pragma once
// A problem with a sweep file or a sweep directory, found before any run starts. The message
// starts with where the problem is ("configs/ablation.toml:12") and names the key and value.
#include <stdexcept>

namespace altgrad::sweep {

class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace altgrad::sweep
