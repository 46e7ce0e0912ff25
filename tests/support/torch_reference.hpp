#pragma once
// The PyTorch references in tests/reference/ run under Debian's Python, where python3-torch installs;
// tests that call them skip, saying why, where it cannot import what they need.
#include <cstdlib>
#include <string>

namespace altgrad::test_support {

inline constexpr const char* kPython = "/usr/bin/python3";

// Whether kPython imports `modules` ("torch", "torch, numpy").
inline bool python_imports(const std::string& modules) {
  return std::system((std::string(kPython) + " -c 'import " + modules + "' > /dev/null 2>&1").c_str()) == 0;
}

}  // namespace altgrad::test_support
