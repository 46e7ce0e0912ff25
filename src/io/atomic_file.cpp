#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace altgrad::io {
namespace {

void sync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw FileError("cannot open " + path.string() + " to sync it: " + std::strerror(errno));
  const int status = ::fsync(fd);
  ::close(fd);
  if (status != 0) throw FileError("cannot sync " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::filesystem::path temporary = dir / ("." + path.filename().string() + ".tmp-" + std::to_string(::getpid()));
  try {
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      if (!out) throw FileError("cannot create " + temporary.string() + ": " + std::strerror(errno));
      write(out);
      out.flush();
      if (!out) throw FileError("cannot write " + temporary.string() + ": " + std::strerror(errno));
    }
    sync_path(temporary, O_RDONLY);
    std::filesystem::rename(temporary, path);
    sync_path(dir, O_RDONLY | O_DIRECTORY);  // make the rename itself durable
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
}

}  // namespace altgrad::io
