// Running Slurm's commands: exit status and both output streams, a program that is not there, and
// output larger than a pipe's buffer on both streams at once (which would deadlock a reader that
// drains one stream before the other).
#include "sweep/slurm_commands.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace altgrad::sweep {
namespace {

TEST(SlurmCommands, CapturesStatusAndBothStreams) {
  const CommandOutput r = capture_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(SlurmCommands, ArgumentsReachTheProgramUnchangedWithNoShell) {
  const CommandOutput r = capture_command({"printf", "%s|", "a b", "$HOME", "*"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "a b|$HOME|*|");
}

TEST(SlurmCommands, AMissingProgramIs127WithAReason) {
  const CommandOutput r = capture_command({"altgrad-no-such-program"});
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("altgrad-no-such-program"), std::string::npos);
}

TEST(SlurmCommands, LargeOutputOnBothStreamsDoesNotBlock) {
  // 1 MiB to each stream, interleaved: far beyond a pipe's 64 KiB.
  const CommandOutput r = capture_command(
      {"sh", "-c", "i=0; while [ $i -lt 16 ]; do head -c 65536 /dev/zero; head -c 65536 /dev/zero >&2; i=$((i+1)); done"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.size(), 1u << 20);
  EXPECT_EQ(r.err.size(), 1u << 20);
}

TEST(SlurmCommands, AFailedCancelReportsScancelsMessage) {
  // With no Slurm on PATH, or with a job id Slurm does not know, scancel fails and says why.
  try {
    cancel_jobs({"not-a-job-id"});
    FAIL() << "cancel_jobs accepted a job id that cannot exist";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("scancel exited with status ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace altgrad::sweep
