#include "sweep/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace altgrad::sweep {

pid_t start_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                  const std::filesystem::path& log) {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const auto& [name, value] : env) replaced = replaced || entry.starts_with(name + "=");
    if (!replaced) environment.push_back(entry);
  }
  for (const auto& [name, value] : env) environment.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) throw std::system_error(errno, std::generic_category(), "cannot open " + log.string());
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out);
    throw std::system_error(errno, std::generic_category(), "fork");
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the sweep died before prctl took effect
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(out);
  return pid;
}

ChildExit wait_for_child() {
  int status = 0;
  pid_t pid;
  do {
    pid = ::waitpid(-1, &status, 0);
  } while (pid < 0 && errno == EINTR);
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "waitpid");
  return {pid, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

}  // namespace altgrad::sweep
