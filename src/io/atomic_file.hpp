#pragma once
// Writes that never leave a half-written file behind: the bytes go to a temporary file in the same
// directory, are flushed to disk, and the temporary is renamed over the target (atomic on POSIX).
#include <filesystem>
#include <functional>
#include <ostream>
#include <stdexcept>

namespace altgrad::io {

class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Calls write(stream) on a temporary beside `path`, then replaces `path` with it. On any failure
// (including an exception from `write`) the temporary is removed and `path` is left as it was.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

}  // namespace altgrad::io
