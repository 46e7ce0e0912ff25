#include "sweep/slurm_commands.hpp"

#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace altgrad::sweep {
namespace {

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("cannot create a pipe");
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
};

// Reads both pipes to their end at once, so that neither child stream can fill up and block.
void drain(int out_fd, int err_fd, std::string& out, std::string& err) {
  std::array<pollfd, 2> fds{{{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}}};
  std::array<std::string*, 2> into{&out, &err};
  int open = 2;
  char buffer[4096];
  while (open > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("poll failed while reading a command's output");
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        into[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // poll ignores negative descriptors
        --open;
      }
    }
  }
}

std::string describe(const std::vector<std::string>& argv, const CommandOutput& result) {
  std::string text = argv.front() + " exited with status " + std::to_string(result.status);
  if (!result.err.empty()) text += ": " + result.err.substr(0, result.err.find_last_not_of("\n") + 1);
  return text;
}

}  // namespace

CommandOutput capture_command(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::invalid_argument("capture_command: no program given");
  Pipe out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out.read);
  posix_spawn_file_actions_addclose(&actions, err.read);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  CommandOutput result;
  if (spawned != 0) {
    result.status = 127;
    result.err = argv[0] + ": cannot run it (" + std::string(std::strerror(spawned)) + "); is Slurm installed and on PATH?";
    return result;
  }
  ::close(out.write);
  out.write = -1;
  ::close(err.write);
  err.write = -1;
  drain(out.read, err.read, result.out, result.err);
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
  return result;
}

std::string submit_array(const std::filesystem::path& script, const std::vector<std::string>& options) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script.string());
  const CommandOutput result = capture_command(argv);
  if (result.status != 0) throw std::runtime_error(describe(argv, result));
  return parse_sbatch_job_id(result.out);
}

SlurmTasks query_array(const std::string& array_job_id) {
  SlurmTasks tasks;
  const std::vector<std::string> sacct = {"sacct", "--noheader", "--parsable2", "--allocations",
                                          std::string("--format=") + kSacctFields, "--jobs=" + array_job_id};
  // sacct fails where a cluster keeps no accounting; squeue alone then answers.
  if (const CommandOutput accounted = capture_command(sacct); accounted.status == 0) {
    tasks = parse_sacct(accounted.out, array_job_id);
  }
  const std::vector<std::string> squeue = {"squeue", "--noheader", "--array", "--states=all",
                                           std::string("--format=") + kSqueueFormat, "--jobs=" + array_job_id};
  const CommandOutput queued = capture_command(squeue);
  // An id the controller has forgotten is an error to squeue; sacct's answer then stands.
  if (queued.status == 0) {
    for (auto& [index, task] : parse_squeue(queued.out, array_job_id)) tasks[index] = task;  // the live view wins
  } else if (tasks.empty() && queued.err.find("Invalid job id") == std::string::npos) {
    throw std::runtime_error(describe(squeue, queued));
  }
  return tasks;
}

void cancel_jobs(const std::vector<std::string>& job_ids) {
  if (job_ids.empty()) return;
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), job_ids.begin(), job_ids.end());
  const CommandOutput result = capture_command(argv);
  if (result.status != 0) throw std::runtime_error(describe(argv, result));
}

}  // namespace altgrad::sweep
