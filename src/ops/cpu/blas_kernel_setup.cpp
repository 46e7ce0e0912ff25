#include "ops/cpu/blas_kernel_setup.hpp"

#include <cblas.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <vector>

#include "ops/cpu/gemm.hpp"

namespace altgrad::ops::cpu {
namespace {

constexpr const char* kCoretype = "OPENBLAS_CORETYPE";
constexpr const char* kPin = "ALTGRAD_BLAS_KERNEL";
// "<kernel set by altgrad> <kernel OpenBLAS loads by itself>".
constexpr const char* kMarker = "ALTGRAD_BLAS_CHOICE";

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

struct Marker {
  std::string kernel, openblas_pick;
};

std::optional<Marker> read_marker() {
  const std::string text = environment(kMarker);
  const std::size_t space = text.find(' ');
  if (space == std::string::npos) return std::nullopt;
  return Marker{text.substr(0, space), text.substr(space + 1)};
}

// The environment read once: who set OPENBLAS_CORETYPE, and the choice that follows.
struct Situation {
  BlasKernelChoice choice;
  std::string loaded, openblas_pick;
  bool set_by_altgrad = false;
};

Situation situation() {
  const std::string coretype = environment(kCoretype);
  const std::optional<Marker> marker = read_marker();
  Situation s;
  s.loaded = blas_kernel();
  s.set_by_altgrad = !coretype.empty() && marker && marker->kernel == coretype;
  const bool user = !coretype.empty() && !s.set_by_altgrad;
  s.openblas_pick = s.set_by_altgrad ? marker->openblas_pick : (user ? "" : s.loaded);
  s.choice = choose_blas_kernel(read_cpu_features(), s.openblas_pick, environment(kPin), user);
  return s;
}

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = text.find('\0', begin);
    args.push_back(text.substr(begin, end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return args;
}

// Returns only if the exec failed, with the reason.
std::string reexecute() {
  // The resolved path rather than /proc/self/exe itself: under valgrind --trace-children=yes that
  // link names valgrind's tool, while readlink answers with the program's own path.
  std::string program(4096, '\0');
  const ssize_t length = ::readlink("/proc/self/exe", program.data(), program.size());
  if (length <= 0) return std::string("cannot read /proc/self/exe: ") + std::strerror(errno);
  program.resize(static_cast<std::size_t>(length));
  std::vector<std::string> args = own_arguments();
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv(program.c_str(), argv.data());
  return "cannot re-execute " + program + ": " + std::strerror(errno);
}

// A pinned kernel that cannot be had is an error (the pin promises bits); the automatic choice
// goes on with the kernel OpenBLAS loaded, and says so.
void refuse_or_note(const BlasKernelChoice& choice, const std::string& what) {
  if (choice.source == BlasKernelSource::pinned) throw std::runtime_error(what);
  std::fprintf(stderr, "altgrad: note: %s\n", what.c_str());
}

std::string library_name() {
  const std::string config = openblas_get_config();  // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..."
  const std::size_t second_space = config.find(' ', config.find(' ') + 1);
  return config.substr(0, second_space);
}

}  // namespace

void select_blas_kernel() {
  const Situation s = situation();
  if (s.choice.source == BlasKernelSource::user || s.choice.kernel == s.loaded) return;
  if (s.set_by_altgrad && environment(kCoretype) == s.choice.kernel)
    // Already re-executed for this kernel, and OpenBLAS still runs another: it ignores the variable.
    return refuse_or_note(s.choice, std::string("OpenBLAS was asked for the ") + s.choice.kernel + " kernel (" +
                                        kCoretype + ") and runs " + s.loaded +
                                        "; a build without DYNAMIC_ARCH ignores the variable");
  ::setenv(kCoretype, s.choice.kernel.c_str(), 1);
  ::setenv(kMarker, (s.choice.kernel + " " + s.openblas_pick).c_str(), 1);
  const std::string failure = reexecute();
  ::unsetenv(kCoretype);
  ::unsetenv(kMarker);
  refuse_or_note(s.choice, failure + "; running OpenBLAS's " + s.loaded + " kernel");
}

BlasKernelReport blas_kernel_report() {
  const Situation s = situation();
  return {library_name(), s.loaded, s.choice.kernel, s.openblas_pick, s.choice.source, describe(read_cpu_features())};
}

std::string describe(const BlasKernelReport& r) {
  std::string why;
  switch (r.source) {
    case BlasKernelSource::openblas: why = "OpenBLAS's own choice for this CPU"; break;
    case BlasKernelSource::upgraded:
      why = "altgrad's choice for this CPU; OpenBLAS alone loads " + r.openblas_pick;
      break;
    case BlasKernelSource::pinned:
      why = "pinned by " + std::string(kPin) + "=" + environment(kPin) + "; OpenBLAS alone loads " + r.openblas_pick;
      break;
    case BlasKernelSource::user: why = std::string("set by ") + kCoretype + "=" + environment(kCoretype); break;
  }
  std::string line = r.library + ", kernel " + r.kernel + " (" + why + ")";
  if (!r.requested.empty() && r.requested != r.kernel) line += "; asked for " + r.requested + ", not loaded";
  return line;
}

}  // namespace altgrad::ops::cpu
