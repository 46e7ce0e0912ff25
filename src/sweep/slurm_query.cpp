#include "sweep/slurm_query.hpp"

#include <charconv>
#include <stdexcept>

namespace altgrad::sweep {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(separator, start)) != std::string_view::npos; start = at + 1) {
    parts.push_back(text.substr(start, at - start));
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

bool parse_index(std::string_view text, std::int64_t& value) {
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 0;
}

[[noreturn]] void malformed(std::string_view what, std::string_view text) {
  throw std::runtime_error("cannot read " + std::string(what) + " \"" + std::string(text) + "\"");
}

void add_tasks(SlurmTasks& tasks, std::string_view indices, const std::string& array_job, SlurmTask task) {
  for (const std::int64_t index : expand_array_indices(indices)) {
    task.job_id = array_job + "_" + std::to_string(index);
    tasks[index] = task;
  }
}

}  // namespace

std::string parse_sbatch_job_id(std::string_view output) {
  const std::string_view line = trim(output.substr(0, output.find('\n')));
  const std::string_view id = line.substr(0, line.find(';'));
  std::int64_t value;
  if (!parse_index(id, value)) malformed("sbatch's job id in its output", output);
  return std::string(id);
}

std::vector<std::int64_t> expand_array_indices(std::string_view expression) {
  std::string_view body = trim(expression);
  if (!body.empty() && body.front() == '[') {
    if (body.back() != ']') malformed("array task indices", expression);
    body = body.substr(1, body.size() - 2);
  }
  body = body.substr(0, body.find('%'));  // the concurrency limit of a pending range
  std::vector<std::int64_t> indices;
  for (const std::string_view part : split(body, ',')) {
    const auto dash = part.find('-');
    std::int64_t first, last;
    if (dash == std::string_view::npos) {
      if (!parse_index(part, first)) malformed("array task indices", expression);
      last = first;
    } else if (!parse_index(part.substr(0, dash), first) || !parse_index(part.substr(dash + 1), last) || last < first) {
      malformed("array task indices", expression);
    }
    for (std::int64_t i = first; i <= last; ++i) indices.push_back(i);
  }
  return indices;
}

SlurmTasks parse_squeue(std::string_view output, std::string_view array_job_id) {
  SlurmTasks tasks;
  const std::string job(array_job_id);
  for (const std::string_view raw : split(output, '\n')) {
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    const auto fields = split(line, '|');
    if (fields.size() != 4) malformed("squeue's line", line);
    if (fields[0] != array_job_id) continue;
    add_tasks(tasks, fields[1], job, {"", std::string(fields[2]), fields[3] == "None" ? "" : std::string(fields[3])});
  }
  return tasks;
}

SlurmTasks parse_sacct(std::string_view output, std::string_view array_job_id) {
  SlurmTasks tasks;
  const std::string job(array_job_id);
  const std::string prefix = job + "_";
  for (const std::string_view raw : split(output, '\n')) {
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    const auto fields = split(line, '|');
    if (fields.size() != 3) malformed("sacct's line", line);
    // "1234_5", "1234_[6-9]"; job steps ("1234_5.batch") are left out by --allocations.
    if (fields[0].substr(0, prefix.size()) != prefix || fields[0].find('.') != std::string_view::npos) continue;
    const std::string_view state = fields[1].substr(0, fields[1].find(' '));  // "CANCELLED by 0"
    add_tasks(tasks, fields[0].substr(prefix.size()), job, {"", std::string(state), std::string(fields[2])});
  }
  return tasks;
}

}  // namespace altgrad::sweep
