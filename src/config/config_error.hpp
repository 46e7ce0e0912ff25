#pragma once
// The error of every config problem: its message starts with where the value came from
// ("configs/x.toml:12" or "--set n_head=5"), then names the key, the bad value and what is allowed.
#include <stdexcept>

namespace altgrad::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace altgrad::config
