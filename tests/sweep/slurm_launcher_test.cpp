// The Slurm launcher without a cluster: which flags each launcher takes, the record of submitted
// jobs, the --status columns built from hand-written squeue and sacct text, and a submission and a
// resubmission through stand-in sbatch/squeue/sacct programs put first on PATH (they record their
// arguments and print what a cluster would). tests/slurm/slurm_sweep_test.sh runs the real thing.
#include "support/text_file.hpp"
#include "sweep/slurm_launcher.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sweep/sweep_error.hpp"
#include "sweep_test_support.hpp"

namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;
using test_support::ScratchDir;

std::string error_of(const std::string& launcher, const std::vector<std::string>& given) {
  try {
    check_launcher_flags(launcher, given);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SlurmLauncherFlags, SlurmFlagsNeedTheSlurmLauncherAndAreNamed) {
  EXPECT_EQ(error_of("local", {}), "");
  EXPECT_EQ(error_of("local", {"--jobs"}), "");
  EXPECT_EQ(error_of("slurm", kSlurmOnlyFlags), "");
  for (const std::string& flag : kSlurmOnlyFlags) {
    const std::string error = error_of("local", {"--jobs", flag});
    EXPECT_EQ(error.rfind(flag + " is a flag of the Slurm launcher", 0), 0u) << error;
  }
  EXPECT_EQ(error_of("slurm", {"--partition", "--jobs"}).rfind("--jobs is a flag of the local launcher", 0), 0u);
  EXPECT_EQ(error_of("pbs", {}), "--launcher \"pbs\": expected local or slurm");
}

TEST(SlurmLauncherFlags, OnlyFinalStatesAreInactive) {
  for (const char* state : {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "REQUEUED", "SUSPENDED", "RESIZING"}) {
    EXPECT_TRUE(slurm_task_active(state)) << state;
  }
  for (const char* state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}) {
    EXPECT_FALSE(slurm_task_active(state)) << state;
  }
}

TEST(SlurmJobs, ArrayExpressionsJoinConsecutiveTasksIntoRanges) {
  EXPECT_EQ(array_expression({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(array_expression({1, 3, 5, 6, 7, 10}), "1,3,5-7,10");
  EXPECT_EQ(array_expression({4}), "4");
  for (const std::vector<std::int64_t>& tasks : {std::vector<std::int64_t>{0, 1, 2, 3}, {1, 3, 5, 6, 7, 10}, {4}}) {
    EXPECT_EQ(expand_array_indices(array_expression(tasks)), tasks);  // what jobs.txt is read back with
  }
}

TEST(SlurmJobs, SubmissionsAreAppendedAndReadBackAndABadLineIsNamed) {
  ScratchDir dir;
  EXPECT_TRUE(read_slurm_jobs(dir.path()).empty());
  record_slurm_job(dir.path(), {"1234", "2026-11-24T15:30:02Z", {0, 1, 2, 3}});
  record_slurm_job(dir.path(), {"1240", "2026-11-24T16:02:41Z", {1, 3}});
  EXPECT_EQ(test_support::read_text(dir.path() / "slurm/jobs.txt"), "1234 2026-11-24T15:30:02Z 0-3\n1240 2026-11-24T16:02:41Z 1,3\n");
  const auto jobs = read_slurm_jobs(dir.path());
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1].job_id, "1240");
  EXPECT_EQ(jobs[1].submitted, "2026-11-24T16:02:41Z");
  EXPECT_EQ(jobs[1].tasks, (std::vector<std::int64_t>{1, 3}));
  dir.write("slurm/jobs.txt", "1234 2026-11-24T15:30:02Z 0-3\nabc 2026-11-24T16:02:41Z 1\n");
  try {
    read_slurm_jobs(dir.path());
    FAIL() << "a job id that is not a number was accepted";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("jobs.txt:2: \"abc "), std::string::npos) << e.what();
  }
}

// Runs a, b, c, d (tasks 0-3) submitted as 1234; b and d cancelled and resubmitted as 1240.
const std::vector<std::string> kTaskRuns = {"a", "b", "c", "d"};
const std::vector<SlurmSubmission> kJobs = {{"1234", "2026-11-24T15:30:02Z", {0, 1, 2, 3}},
                                            {"1240", "2026-11-24T16:02:41Z", {1, 3}}};

TEST(SlurmStatusColumns, EachRunShowsItsLatestTaskAndThatTasksState) {
  std::map<std::string, SlurmTasks> states;
  // 1240 is still queued: squeue answers. 1234 is over and squeue has forgotten it; sacct remembers.
  states["1240"] = parse_squeue("1240|1|RUNNING|None\n1240|3|PENDING|JobArrayTaskLimit\n", "1240");
  states["1234"] = parse_sacct("1234_0|COMPLETED|0:0\n1234_1|CANCELLED by 0|0:15\n1234_2|FAILED|1:0\n"
                               "1234_3|CANCELLED by 0|0:15\n",
                               "1234");
  const SlurmColumns columns = slurm_columns(kTaskRuns, kJobs, states);
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns.at("a").job, "1234_0");
  EXPECT_EQ(columns.at("a").state, "COMPLETED");
  EXPECT_EQ(columns.at("b").job, "1240_1");  // not its cancelled first attempt
  EXPECT_EQ(columns.at("b").state, "RUNNING");
  EXPECT_EQ(columns.at("c").job, "1234_2");
  EXPECT_EQ(columns.at("c").state, "FAILED (1:0)");
  EXPECT_EQ(columns.at("d").job, "1240_3");
  EXPECT_EQ(columns.at("d").state, "PENDING (JobArrayTaskLimit)");
}

TEST(SlurmStatusColumns, ATaskSlurmNoLongerReportsShowsADash) {
  // No accounting: squeue alone, and it has forgotten 1234 (states has no entry) and task 3 of 1240.
  std::map<std::string, SlurmTasks> states;
  states["1240"] = parse_squeue("1240|1|COMPLETED|None\n", "1240");
  const SlurmColumns columns = slurm_columns(kTaskRuns, kJobs, states);
  EXPECT_EQ(columns.at("a").job, "1234_0");
  EXPECT_EQ(columns.at("a").state, "-");
  EXPECT_EQ(columns.at("b").state, "COMPLETED");
  EXPECT_EQ(columns.at("d").job, "1240_3");
  EXPECT_EQ(columns.at("d").state, "-");
}

void write_two_run_sweep(const ScratchDir& dir) {
  dir.write("index.json", R"({"format": "altgrad-sweep/1", "runs": [{"name": "a"}, {"name": "b"}]})");
  dir.write("runs/a/metrics.jsonl", "{\"step\": 4, \"loss\": 2.0, \"val_loss\": 2.5}\n");
  dir.write("runs/a/events.jsonl", "{\"event\": \"start\"}\n{\"event\": \"end\", \"reason\": \"completed\"}\n");
}

TEST(SlurmStatusColumns, TheTableGainsTwoColumnsBeforeTheStopReason) {
  ScratchDir dir;
  write_two_run_sweep(dir);
  EXPECT_EQ(status_table(dir.path()),
            "run  state      step  val loss  stop reason\n"
            "a    completed     4    2.5000  completed\n"
            "b    pending       0         -  -\n");
  EXPECT_EQ(status_table(dir.path(), SlurmColumns{{"a", {"1234_0", "COMPLETED"}}}),
            "run  state      step  val loss  slurm job  slurm state  stop reason\n"
            "a    completed     4    2.5000  1234_0     COMPLETED    completed\n"
            "b    pending       0         -  -          -            -\n");
}

// PATH replaced for one test, restored however it ends.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& path) : old_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    ::setenv("PATH", path.c_str(), 1);
  }
  ~ScopedPath() { ::setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

TEST(SlurmStatusColumns, WithoutSlurmsCommandsTheTableIsPrintedAndWhySaidOnce) {
  ScratchDir dir;
  write_two_run_sweep(dir);
  dir.write("slurm/tasks.txt", "a\nb\n");
  dir.write("slurm/jobs.txt", "1234 2026-11-24T15:30:02Z 0\n1240 2026-11-24T16:02:41Z 1\n");
  std::ostringstream notes;
  std::string table;
  {
    const ScopedPath no_slurm((dir.path() / "empty-bin").string());
    table = sweep_status(dir.path(), notes);
  }
  const std::string said = notes.str();
  EXPECT_EQ(said.rfind("Slurm states unknown (shown as -): squeue exited with status 127", 0), 0u) << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;  // once, for two recorded jobs
  EXPECT_NE(table.find("a    completed     4    2.5000  1234_0     -            completed\n"), std::string::npos) << table;
  EXPECT_NE(table.find("b    pending       0         -  1240_1     -            -\n"), std::string::npos) << table;
}

// Stand-ins for sbatch, squeue and sacct: sbatch records its arguments and prints job id 4321;
// squeue prints the file squeue.txt (a cluster's answer); sacct fails as without accounting.
fs::path fake_slurm(const ScratchDir& dir) {
  const fs::path bin = dir.path() / "bin";
  const std::string log = (dir.path() / "sbatch.args").string();
  dir.write("bin/sbatch", "#!/bin/sh\necho \"$@\" >>" + log + "\necho 4321\n");
  dir.write("bin/squeue", "#!/bin/sh\ncat " + (dir.path() / "squeue.txt").string() + "\n");
  dir.write("bin/sacct", "#!/bin/sh\necho 'sacct: error: Slurm accounting storage is disabled' >&2\nexit 1\n");
  for (const char* tool : {"sbatch", "squeue", "sacct"}) ::chmod((bin / tool).c_str(), 0755);
  return bin;
}

constexpr const char* kFourRuns = R"(base = "base.toml"
[axes]
seed = [1, 2]
learning_rate = [1e-3, 2e-3]
)";

TEST(SlurmLaunch, SubmitsOnlyUnfinishedRunsAndRefusesWhileTheArrayRuns) {
  ScratchDir dir;
  const fs::path bin = fake_slurm(dir);
  dir.write("base.toml", sweep_test::kSmallBase);
  const SweepSpec spec = load_sweep(dir.write("sweep.toml", kFourRuns));
  const std::vector<PlannedRun> runs = expand(spec);
  const fs::path sweep = dir.path() / "sweep";
  const fs::path altgrad = "/opt/altgrad/bin/altgrad";
  SlurmOptions options;
  options.array_limit = 2;
  const ScopedPath fake(bin.string() + ":/usr/bin:/bin");
  std::ostringstream out;
  launch_on_slurm(spec, runs, sweep, altgrad, options, out);
  const std::string script = (sweep / "slurm/sweep.sbatch").string();
  EXPECT_EQ(test_support::read_text(dir.path() / "sbatch.args"), "--parsable --array=0-3%2 " + script + "\n");
  EXPECT_EQ(test_support::read_text(sweep / "slurm/tasks.txt"), "seed1.lr1e-3\nseed1.lr2e-3\nseed2.lr1e-3\nseed2.lr2e-3\n");
  EXPECT_EQ(test_support::read_text(sweep / "slurm/sweep.sbatch"), slurm_array_script(sweep, altgrad, 4, options));
  EXPECT_EQ(test_support::read_text(sweep / "sweep.toml"), kFourRuns);
  for (const PlannedRun& run : runs) EXPECT_TRUE(fs::exists(sweep / "runs" / run.name / "config.toml")) << run.name;
  const auto jobs = read_slurm_jobs(sweep);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job_id, "4321");
  EXPECT_EQ(jobs[0].tasks, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_NE(out.str().find("submitted array job 4321: 4 of 4 runs"), std::string::npos) << out.str();

  // While task 1 runs, a second submission would start a second task on its run: refused.
  dir.write("squeue.txt", "4321|0|COMPLETED|None\n4321|1|RUNNING|None\n4321|2|COMPLETED|None\n");
  try {
    launch_on_slurm(spec, runs, sweep, altgrad, options, out);
    FAIL() << "a resubmission while task 4321_1 runs was accepted";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("4321_1 (run seed1.lr2e-3) RUNNING"), std::string::npos) << e.what();
  }

  // Runs 0 and 2 completed, 1 and 3 failed: only 1 and 3 are submitted again.
  dir.write("squeue.txt", "4321|0|COMPLETED|None\n4321|1|FAILED|NonZeroExitCode\n4321|2|COMPLETED|None\n");
  for (const int i : {0, 2}) {
    dir.write("sweep/runs/" + runs[i].name + "/metrics.jsonl", "{\"step\": 4, \"loss\": 2.0}\n");
    dir.write("sweep/runs/" + runs[i].name + "/events.jsonl", "{\"event\": \"end\", \"reason\": \"completed\"}\n");
  }
  const std::string finished_before = test_support::read_text(sweep / "runs" / runs[0].name / "events.jsonl");
  std::ostringstream again;
  launch_on_slurm(spec, runs, sweep, altgrad, options, again);
  EXPECT_EQ(test_support::read_text(dir.path() / "sbatch.args"),
            "--parsable --array=0-3%2 " + script + "\n--parsable --array=1,3%2 " + script + "\n");
  EXPECT_EQ(test_support::read_text(sweep / "runs" / runs[0].name / "events.jsonl"), finished_before);
  EXPECT_NE(again.str().find("skip " + runs[2].name + ": already completed"), std::string::npos) << again.str();
  EXPECT_NE(again.str().find("submitted array job 4321: 2 of 4 runs (tasks 1,3 "), std::string::npos) << again.str();
  ASSERT_EQ(read_slurm_jobs(sweep).size(), 2u);
  EXPECT_EQ(read_slurm_jobs(sweep)[1].tasks, (std::vector<std::int64_t>{1, 3}));
}

TEST(SlurmLaunch, AThresholdSearchIsRefusedBeforeAnythingIsWritten) {
  ScratchDir dir;
  dir.write("base.toml", sweep_test::kSmallBase);
  const SweepSpec spec = load_sweep(dir.write(
      "search.toml", "base = \"base.toml\"\n[search]\nkind = \"lr_threshold\"\nlow = 1e-4\nhigh = 1e-1\nsteps = 4\n"));
  std::ostringstream out;
  try {
    launch_on_slurm(spec, expand(spec), dir.path() / "sweep", "/opt/altgrad", SlurmOptions{}, out);
    FAIL() << "a threshold search was submitted";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("the Slurm launcher does not run searches"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "sweep"));
}

}  // namespace
}  // namespace altgrad::sweep
