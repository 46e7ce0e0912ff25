// The generated sbatch script: its #SBATCH header, and what a task does when bash runs it with the
// environment Slurm gives an array task, against a stand-in `altgrad` (and `scontrol`) that record
// how they were called. The same script runs on a real cluster in tests/slurm/slurm_smoke_test.sh.
#include "support/text_file.hpp"
#include "sweep/slurm_script.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/scratch_dir.hpp"

namespace altgrad::sweep {
namespace {

namespace fs = std::filesystem;
using test_support::ScratchDir;

std::vector<std::string> sbatch_lines(const std::string& script) {
  std::vector<std::string> lines;
  std::istringstream in(script);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#SBATCH ", 0) == 0) lines.push_back(line.substr(8));
  }
  return lines;
}

void write(const fs::path& file, const std::string& text, bool executable = false) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
  if (executable) ::chmod(file.c_str(), 0755);
}

TEST(SlurmScript, TheHeaderAsksSlurmForWhatTheOptionsSay) {
  SlurmOptions o;
  o.partition = "cpu";
  o.time = "02:30:00";
  o.cpus_per_run = 4;
  o.mem = "8G";
  o.array_limit = 3;
  o.signal_seconds = 300;
  o.sbatch_args = {"--account=lab", "--qos=low"};
  const std::string script = slurm_array_script("/shared/sweeps/abl", "/opt/altgrad/build/altgrad", 10, o);
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  const std::vector<std::string> expected = {
      "--job-name=altgrad-sweep", "--array=0-9%3", "--cpus-per-task=4", "--partition=cpu", "--time=02:30:00",
      "--mem=8G", "--requeue", "--signal=B:USR1@300", "--open-mode=append", "--output=/shared/sweeps/abl/slurm/%A_%a.out",
      "--account=lab", "--qos=low"};
  EXPECT_EQ(sbatch_lines(script), expected);
  EXPECT_NE(script.find("sweep_dir='/shared/sweeps/abl'\n"), std::string::npos);
  EXPECT_NE(script.find("altgrad='/opt/altgrad/build/altgrad'\n"), std::string::npos);
}

TEST(SlurmScript, UnsetOptionsLeaveTheClustersDefaults) {
  const std::string script = slurm_array_script("/s", "/bin/altgrad", 1, SlurmOptions{});
  const std::vector<std::string> expected = {"--job-name=altgrad-sweep", "--array=0-0", "--cpus-per-task=1",
                                             "--requeue", "--signal=B:USR1@120", "--open-mode=append",
                                             "--output=/s/slurm/%A_%a.out"};
  EXPECT_EQ(sbatch_lines(script), expected);
}

TEST(SlurmScript, BadOptionsAreRefusedByName) {
  const auto refusal = [](SlurmOptions o) {
    try {
      slurm_array_script("/s", "/bin/altgrad", 2, o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  SlurmOptions o;
  o.time = "2h";
  EXPECT_EQ(refusal(o).rfind("--time \"2h\"", 0), 0u) << refusal(o);
  for (const char* good : {"90", "90:30", "1:30:00", "2-0", "2-12:00", "2-12:00:00"}) {
    o.time = good;
    EXPECT_EQ(refusal(o), "accepted") << good;
  }
  o = {};
  o.mem = "4 GB";
  EXPECT_EQ(refusal(o).rfind("--mem \"4 GB\"", 0), 0u);
  o = {};
  o.cpus_per_run = 0;
  EXPECT_EQ(refusal(o).rfind("--cpus-per-run \"0\"", 0), 0u);
  o = {};
  o.sbatch_args = {"--constraint=a\n#SBATCH --x"};
  EXPECT_EQ(refusal(o).rfind("--sbatch-arg", 0), 0u);
  o = {};
  o.sbatch_args = {"account=lab"};
  EXPECT_EQ(refusal(o).rfind("--sbatch-arg \"account=lab\"", 0), 0u);
  o = {};
  o.partition = "a b";
  EXPECT_EQ(refusal(o).rfind("--partition", 0), 0u);
  EXPECT_THROW(slurm_array_script("relative/dir", "/bin/altgrad", 2, SlurmOptions{}), std::invalid_argument);
  EXPECT_THROW(slurm_array_script("/dir with space", "/bin/altgrad", 2, SlurmOptions{}), std::invalid_argument);
  EXPECT_THROW(slurm_array_script("/s", "/bin/altgrad", 0, SlurmOptions{}), std::invalid_argument);
}

TEST(SlurmScript, TheTaskListNamesOneRunPerLine) {
  EXPECT_EQ(slurm_task_list({"fp32.seed1", "e4m3.seed1"}), "fp32.seed1\ne4m3.seed1\n");
  EXPECT_THROW(slurm_task_list({"a/b"}), std::invalid_argument);
  EXPECT_THROW(slurm_task_list({"two\nlines"}), std::invalid_argument);
  EXPECT_THROW(slurm_task_list({".."}), std::invalid_argument);
}

// A sweep directory with three runs in three states, and stand-ins for altgrad and scontrol.
class SlurmTask : public ::testing::Test {
 protected:
  void SetUp() override {
    sweep_ = dir_.path() / "sweep";
    write(slurm_tasks_path(sweep_), slurm_task_list({"fresh", "interrupted", "finished"}));
    write(sweep_ / "runs/fresh/config.toml", "max_iters = 8\n");
    write(sweep_ / "runs/interrupted/events.jsonl",
          "{\"event\":\"start\",\"step\":0}\n{\"event\":\"end\",\"interrupted\":true,\"reason\":\"interrupted by SIGTERM\"}\n");
    fs::create_directories(sweep_ / "runs/interrupted/checkpoints/step_5");
    write(sweep_ / "runs/finished/events.jsonl",
          "{\"event\":\"end\",\"interrupted\":true,\"reason\":\"interrupted\"}\n{\"event\":\"resume\"}\n"
          "{\"event\":\"end\",\"reason\":\"completed\",\"step\":8}\n");
    fs::create_directories(sweep_ / "runs/finished/checkpoints/step_8");
    // Records its arguments and thread count; with STAND_IN_WAIT it waits for SIGTERM and then
    // exits 75, as altgrad does after its checkpoint.
    write(dir_.path() / "bin/altgrad",
          "#!/bin/bash\necho \"$* threads=$OMP_NUM_THREADS\" >> \"$STAND_IN_LOG\"\n"
          "if [[ -n \"${STAND_IN_WAIT:-}\" ]]; then\n"
          "  trap 'echo TERM >> \"$STAND_IN_LOG\"; exit 75' TERM\n"
          "  touch \"$STAND_IN_WAIT\"; while :; do sleep 0.05; done\nfi\nexit ${STAND_IN_STATUS:-0}\n",
          true);
    write(dir_.path() / "bin/scontrol", "#!/bin/bash\necho \"scontrol $*\" >> \"$STAND_IN_LOG\"\n", true);
    write(slurm_script_path(sweep_), slurm_array_script(sweep_, dir_.path() / "bin/altgrad", 3, SlurmOptions{}));
  }

  // Runs the script as array task `task` of job 77 with 3 CPUs; `driver` may signal it ($task is
  // its pid). Returns the script's exit status.
  int run_task(int task, const std::string& environment = "", const std::string& driver = "") {
    const std::string command = "cd " + dir_.path().string() + " && export PATH=" + (dir_.path() / "bin").string() +
                                ":$PATH STAND_IN_LOG=" + log().string() + " SLURM_ARRAY_TASK_ID=" + std::to_string(task) +
                                " SLURM_ARRAY_JOB_ID=77 SLURM_JOB_ID=78 SLURM_CPUS_PER_TASK=3 " + environment +
                                " && { bash " + slurm_script_path(sweep_).string() + " > task.out 2>&1 & task=$!; " +
                                driver + " wait $task; }";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path log() const { return dir_.path() / "calls.log"; }

  ScratchDir dir_;
  fs::path sweep_;
};

TEST_F(SlurmTask, ScriptIsValidBash) {
  EXPECT_EQ(std::system(("bash -n " + slurm_script_path(sweep_).string()).c_str()), 0);
}

TEST_F(SlurmTask, AFreshRunStartsFromItsConfigOnTheTasksCpus) {
  write(sweep_ / "runs/fresh/metrics.jsonl", "{\"step\":1}\n");  // an attempt that never checkpointed
  EXPECT_EQ(run_task(0), 0);
  EXPECT_EQ(test_support::read_text(log()), "train " + sweep_.string() + "/runs/fresh/config.toml --out " + sweep_.string() + "/runs/fresh threads=3\n");
  EXPECT_FALSE(fs::exists(sweep_ / "runs/fresh/metrics.jsonl"));
  EXPECT_TRUE(fs::exists(sweep_ / "runs/fresh/config.toml"));
}

TEST_F(SlurmTask, AnInterruptedRunResumesFromItsCheckpoint) {
  EXPECT_EQ(run_task(1), 0);
  EXPECT_EQ(test_support::read_text(log()), "train --resume " + sweep_.string() + "/runs/interrupted threads=3\n");
  EXPECT_TRUE(fs::exists(sweep_ / "runs/interrupted/events.jsonl"));
}

TEST_F(SlurmTask, AFinishedRunIsNeverRerun) {
  EXPECT_EQ(run_task(2), 0);
  EXPECT_FALSE(fs::exists(log()));
  EXPECT_NE(test_support::read_text(dir_.path() / "task.out").find("run finished has finished"), std::string::npos);
}

TEST_F(SlurmTask, AStoppedRunCountsAsFinished) {
  write(sweep_ / "runs/finished/events.jsonl", "{\"event\":\"end\",\"reason\":\"non-finite loss at step 3\"}\n");
  EXPECT_EQ(run_task(2), 0);
  EXPECT_FALSE(fs::exists(log()));
}

TEST_F(SlurmTask, AltgradsExitStatusIsTheTasks) {
  EXPECT_EQ(run_task(0, "STAND_IN_STATUS=1"), 1);
}

TEST_F(SlurmTask, AnIndexWithoutARunFails) {
  EXPECT_EQ(run_task(3), 2);
  EXPECT_FALSE(fs::exists(log()));
}

// Slurm's warning before the time limit: USR1 to the batch shell only (--signal=B:USR1@...).
TEST_F(SlurmTask, TheTimeLimitWarningCheckpointsAndRequeuesTheTask) {
  const fs::path started = dir_.path() / "started";
  const std::string wait_then_signal =
      "for i in $(seq 200); do [ -e " + started.string() + " ] && break; sleep 0.05; done; kill -USR1 $task;";
  EXPECT_EQ(run_task(1, "STAND_IN_WAIT=" + started.string(), wait_then_signal), 75);
  EXPECT_EQ(test_support::read_text(log()), "train --resume " + sweep_.string() + "/runs/interrupted threads=3\nTERM\nscontrol requeue 77_1\n");
}

// scancel: SIGTERM to the batch shell (and to altgrad itself); the task ends without requeueing.
TEST_F(SlurmTask, CancellingCheckpointsWithoutRequeueing) {
  const fs::path started = dir_.path() / "started";
  const std::string wait_then_signal =
      "for i in $(seq 200); do [ -e " + started.string() + " ] && break; sleep 0.05; done; kill -TERM $task;";
  EXPECT_EQ(run_task(1, "STAND_IN_WAIT=" + started.string(), wait_then_signal), 75);
  EXPECT_EQ(test_support::read_text(log()), "train --resume " + sweep_.string() + "/runs/interrupted threads=3\nTERM\n");
}

}  // namespace
}  // namespace altgrad::sweep
