#pragma once
// Makes the process run the BLAS kernel that choose_blas_kernel picks, and reports which one it runs.
//
// OpenBLAS reads OPENBLAS_CORETYPE once, while it loads, before main starts: another kernel needs a
// new process image. So select_blas_kernel() re-executes the program once (/proc/self/exe with the
// same arguments, from /proc/self/cmdline) with OPENBLAS_CORETYPE set, and with ALTGRAD_BLAS_CHOICE
// marking that altgrad set it, so the new image (and every altgrad process it starts: sweeps, Slurm
// tasks) tells altgrad's setting from a user's. Loading the library by hand after setting the variable
// would avoid the exec, but every target that multiplies would then reach BLAS through pointers.
#include <string>

#include "ops/cpu/blas_kernel_choice.hpp"

namespace altgrad::ops::cpu {

struct BlasKernelReport {
  std::string library;        // "OpenBLAS 0.3.21"
  std::string kernel;         // the kernel this process runs
  std::string requested;      // the kernel the choice asked for ("" where the user's OPENBLAS_CORETYPE decides)
  std::string openblas_pick;  // what OpenBLAS loads by itself on this CPU; "" where the user's setting hides it
  BlasKernelSource source = BlasKernelSource::openblas;
  std::string cpu;            // describe(read_cpu_features())
};

// Call first in main, before any output or thread: returns in a process that runs the chosen kernel,
// or, where that cannot be had (OpenBLAS built without DYNAMIC_ARCH ignores the variable; no /proc),
// after saying so on stderr. Throws std::invalid_argument for a bad ALTGRAD_BLAS_KERNEL and
// std::runtime_error where a pinned kernel cannot be had.
void select_blas_kernel();

// What this process runs and why (recomputed from the environment, so any binary can ask).
BlasKernelReport blas_kernel_report();

// "OpenBLAS 0.3.21, kernel SkylakeX (altgrad's choice for avx512; OpenBLAS alone loads Haswell)".
std::string describe(const BlasKernelReport& report);

}  // namespace altgrad::ops::cpu
