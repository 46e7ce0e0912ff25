#include "cli/stop_signal.hpp"

#include <csignal>
#include <cstring>
#include <stdexcept>

namespace altgrad::cli {
namespace {

// Written by the handler, read by the training loop: the only state a handler may touch.
volatile std::sig_atomic_t sigterm_received = 0;

extern "C" void on_sigterm(int) { sigterm_received = 1; }

}  // namespace

void catch_sigterm() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_sigterm;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a signal arriving inside a write or read resumes it instead of failing it.
  action.sa_flags = SA_RESTART;
  if (sigaction(SIGTERM, &action, nullptr) != 0) throw std::runtime_error("cannot install the SIGTERM handler");
}

std::optional<std::string> received_stop_signal() {
  if (sigterm_received != 0) return std::string("SIGTERM");
  return std::nullopt;
}

}  // namespace altgrad::cli
