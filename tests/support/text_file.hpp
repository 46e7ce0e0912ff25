#pragma once
// A whole file as a string (empty when it cannot be read), for tests that check what was written.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace altgrad::test_support {

inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace altgrad::test_support
