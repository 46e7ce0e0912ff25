#pragma once
// The CPU reference engine's Kernels (ops/kernels.hpp): each method is the free function of the
// same name in ops/cpu/<layer>.hpp, called with the same arguments.
#include "ops/kernels.hpp"

namespace altgrad::ops::cpu {

// One instance per Scalar for the whole process; it holds no state.
template <typename Scalar>
Kernels<Scalar>& kernels();

}  // namespace altgrad::ops::cpu
