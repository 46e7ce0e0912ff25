#pragma once
// SIGTERM as a request to stop training at the next step boundary with a checkpoint, rather than
// death: Slurm sends it before a job's time limit (`--signal`), on `scancel` and on requeue, and
// follows it with SIGKILL only after its KillWait. A second SIGTERM changes nothing; SIGKILL still
// kills at once.
#include <optional>
#include <string>

namespace altgrad::cli {

// Installs the handler (process-wide; call once before training).
void catch_sigterm();

// "SIGTERM" once the signal has arrived, nothing before.
std::optional<std::string> received_stop_signal();

}  // namespace altgrad::cli
