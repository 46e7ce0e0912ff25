#pragma once
// The parts of altgrad._core, one function per file that registers its part.
#include <pybind11/pybind11.h>

#include "quant/stats.hpp"

namespace altgrad::python {

// The statistics of one quantization pass as a dict (count, overflow, underflow, ..., rel_error).
pybind11::dict stats_dict(const quant::QuantStats& stats);

// resolve_recipe, PointSettings and PointQuantizer: what altgrad.torch.quantize_model is built on.
void bind_points(pybind11::module_& module);

}  // namespace altgrad::python
