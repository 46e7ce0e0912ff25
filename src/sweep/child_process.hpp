#pragma once
// Child processes of a local sweep: started with extra environment variables and their output
// appended to a log file, killed by the kernel if the sweep itself dies (so a killed sweep leaves
// no run writing behind it), and waited for one at a time.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace altgrad::sweep {

struct ChildExit {
  pid_t pid;
  int status;  // exit status, or 128 + signal number
};

// Starts argv[0] with `argv`, `env` added to this process's environment, stdin from /dev/null and
// stdout and stderr appended to `log`. Throws std::system_error when it cannot start.
pid_t start_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                  const std::filesystem::path& log);

// Blocks until one child ends.
ChildExit wait_for_child();

}  // namespace altgrad::sweep
