#include "sweep/slurm_jobs.hpp"

#include <ctime>
#include <fstream>
#include <sstream>

#include "io/atomic_file.hpp"
#include "sweep/slurm_query.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/sweep_error.hpp"

namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;

std::string format_line(const SlurmSubmission& s) {
  return s.job_id + " " + s.submitted + " " + array_expression(s.tasks) + "\n";
}

}  // namespace

fs::path slurm_jobs_path(const fs::path& sweep_dir) { return slurm_dir(sweep_dir) / "jobs.txt"; }

std::string array_expression(const std::vector<std::int64_t>& tasks) {
  std::string text;
  for (std::size_t i = 0; i < tasks.size();) {
    std::size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(tasks[i]);
    if (j > i) text += "-" + std::to_string(tasks[j]);
    i = j + 1;
  }
  return text;
}

std::vector<SlurmSubmission> read_slurm_jobs(const fs::path& sweep_dir) {
  const fs::path path = slurm_jobs_path(sweep_dir);
  std::vector<SlurmSubmission> jobs;
  std::ifstream in(path);
  if (!in) return jobs;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream fields(line);
    SlurmSubmission job;
    std::string tasks, extra;
    fields >> job.job_id >> job.submitted >> tasks;
    try {
      if (tasks.empty() || (fields >> extra)) throw std::runtime_error("expected three fields");
      parse_sbatch_job_id(job.job_id);  // a job id is a number
      job.tasks = expand_array_indices(tasks);
    } catch (const std::runtime_error& e) {
      throw SweepError(path.string() + ":" + std::to_string(number) + ": \"" + line +
                       "\" is not \"JOB_ID SUBMITTED TASKS\" (" + e.what() + ")");
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

void record_slurm_job(const fs::path& sweep_dir, const SlurmSubmission& submission) {
  std::string text;
  for (const SlurmSubmission& job : read_slurm_jobs(sweep_dir)) text += format_line(job);
  text += format_line(submission);
  fs::create_directories(slurm_dir(sweep_dir));
  io::write_file_atomically(slurm_jobs_path(sweep_dir), [&](std::ostream& out) { out << text; });
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace altgrad::sweep
