#pragma once
// A C stdio file owned by a unique_ptr, and the message of a failed file operation, for the readers
// and writers that use stdio (unbuffered by iostreams, and with errno on failure).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace altgrad::io {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using FileHandle = std::unique_ptr<std::FILE, FileCloser>;

// "cannot ACTION PATH: the error's description", e.g. "cannot open run/x: No such file or directory".
std::string os_error_message(const char* action, const std::filesystem::path& path, int error);

}  // namespace altgrad::io
