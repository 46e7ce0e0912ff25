#include "io/c_file.hpp"

#include <cstring>

namespace altgrad::io {

std::string os_error_message(const char* action, const std::filesystem::path& path, int error) {
  return "cannot " + std::string(action) + " " + path.string() + ": " + std::strerror(error);
}

}  // namespace altgrad::io
