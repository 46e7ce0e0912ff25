// Reading sbatch, squeue and sacct output. The squeue texts were recorded from Slurm 22.05
// (Debian 12) on the test cluster of tests/slurm/cluster.sh; the sacct texts follow sacct's
// --parsable2 format (that cluster keeps no accounting, so sacct there only says it is disabled).
#include "sweep/slurm_query.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace altgrad::sweep {
namespace {

TEST(SlurmQuery, SbatchParsablePrintsTheJobIdAndMaybeTheCluster) {
  EXPECT_EQ(parse_sbatch_job_id("1\n"), "1");
  EXPECT_EQ(parse_sbatch_job_id("48213;altgrad-test\n"), "48213");
  EXPECT_THROW(parse_sbatch_job_id("sbatch: error: Batch job submission failed\n"), std::runtime_error);
  EXPECT_THROW(parse_sbatch_job_id(""), std::runtime_error);
}

TEST(SlurmQuery, ArrayIndexExpressionsExpandToEveryTask) {
  EXPECT_EQ(expand_array_indices("5"), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(expand_array_indices("0-4%1"), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(expand_array_indices("[1-3,7]"), (std::vector<std::int64_t>{1, 2, 3, 7}));
  EXPECT_EQ(expand_array_indices("[2-3%2]"), (std::vector<std::int64_t>{2, 3}));
  for (const char* bad : {"", "N/A", "[1-3", "3-1", "1--2", "a"}) {
    EXPECT_THROW(expand_array_indices(bad), std::runtime_error) << bad;
  }
}

TEST(SlurmQuery, SqueueGivesEachTasksStateAndReason) {
  // After `scancel 1_0` on a 5-task array with %1: task 1 runs, the rest wait for the limit.
  const char* recorded =
      "1|2|PENDING|JobArrayTaskLimit\n"
      "1|3|PENDING|JobArrayTaskLimit\n"
      "1|4|PENDING|JobArrayTaskLimit\n"
      "1|1|RUNNING|None\n"
      "2|0|RUNNING|None\n";  // another job's task: not ours
  const SlurmTasks tasks = parse_squeue(recorded, "1");
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks.at(1).job_id, "1_1");
  EXPECT_EQ(tasks.at(1).state, "RUNNING");
  EXPECT_EQ(tasks.at(1).reason, "");
  EXPECT_EQ(tasks.at(4).state, "PENDING");
  EXPECT_EQ(tasks.at(4).reason, "JobArrayTaskLimit");
  EXPECT_EQ(tasks.count(0), 0u);
}

TEST(SlurmQuery, SqueueWithoutArrayExpansionStillNamesEveryTask) {
  const SlurmTasks tasks = parse_squeue("1|0-4%1|PENDING|None\n", "1");
  ASSERT_EQ(tasks.size(), 5u);
  EXPECT_EQ(tasks.at(3).job_id, "1_3");
  EXPECT_EQ(tasks.at(3).state, "PENDING");
}

TEST(SlurmQuery, AMalformedSqueueLineIsAnError) {
  EXPECT_THROW(parse_squeue("1|2|PENDING\n", "1"), std::runtime_error);
}

TEST(SlurmQuery, SacctGivesStatesExitCodesAndTheLatestAttempt) {
  const char* text =
      "1234_0|COMPLETED|0:0\n"
      "1234_1|NODE_FAIL|0:0\n"
      "1234_1|RUNNING|0:0\n"  // requeued: the later line is the current attempt
      "1234_2|CANCELLED by 0|0:15\n"
      "1234_3|FAILED|1:0\n"
      "1234_[4-5%2]|PENDING|0:0\n"
      "12345_0|COMPLETED|0:0\n";  // another job whose id starts alike
  const SlurmTasks tasks = parse_sacct(text, "1234");
  ASSERT_EQ(tasks.size(), 6u);
  EXPECT_EQ(tasks.at(0).state, "COMPLETED");
  EXPECT_EQ(tasks.at(1).state, "RUNNING");
  EXPECT_EQ(tasks.at(2).state, "CANCELLED");
  EXPECT_EQ(tasks.at(2).reason, "0:15");
  EXPECT_EQ(tasks.at(3).state, "FAILED");
  EXPECT_EQ(tasks.at(3).reason, "1:0");
  EXPECT_EQ(tasks.at(5).job_id, "1234_5");
  EXPECT_EQ(tasks.at(5).state, "PENDING");
}

}  // namespace
}  // namespace altgrad::sweep
