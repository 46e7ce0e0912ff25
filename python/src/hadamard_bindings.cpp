// altgrad.hadamard: the engine's randomized Hadamard transform (quant/hadamard.hpp) for numpy
// arrays, so that a researcher can see what it does to a tensor before a recipe applies it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "quant/hadamard.hpp"

namespace py = pybind11;

namespace altgrad::python {
namespace {

// "te": Transformer Engine's 16 signs; "none": all +1; "random": drawn from (seed, stream).
std::vector<float> named_signs(std::size_t size, const std::string& signs, std::uint64_t seed, std::uint64_t stream) {
  if (signs == "te") {
    if (size != 16) throw py::value_error("signs=\"te\" is Transformer Engine's 16-point vector; size is " + std::to_string(size));
    return quant::transformer_engine_signs();
  }
  if (signs == "none") return std::vector<float>(size, 1.0f);
  if (signs == "random") return quant::random_signs(size, seed, stream);
  throw py::value_error("signs must be \"te\", \"none\" or \"random\", got \"" + signs + "\"");
}

py::array_t<float> hadamard(const py::array_t<float, py::array::c_style | py::array::forcecast>& x, std::size_t size,
                            int axis, const std::string& signs, std::uint64_t seed, std::uint64_t stream) {
  if (x.ndim() != 2) throw py::value_error("x must be a 2-D array, got " + std::to_string(x.ndim()) + " dimensions");
  if (axis != 0 && axis != 1 && axis != -1) throw py::value_error("axis must be 0 or 1 (or -1), got " + std::to_string(axis));
  const std::vector<float> sign = named_signs(size, signs, seed, stream);
  const std::size_t rows = static_cast<std::size_t>(x.shape(0)), cols = static_cast<std::size_t>(x.shape(1));
  py::array_t<float> out({x.shape(0), x.shape(1)});
  const std::span<const float> in(x.data(), rows * cols);
  const std::span<float> result(out.mutable_data(), rows * cols);
  try {
    py::gil_scoped_release release;
    if (axis == 0) {
      quant::hadamard_columns(in, result, cols, sign);
    } else {
      quant::hadamard_rows(in, result, cols, sign);
    }
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  return out;
}

}  // namespace

void bind_hadamard(py::module_& module) {
  module.def("hadamard", &hadamard, py::arg("x"), py::arg("size"), py::arg("axis"), py::arg("signs"), py::arg("seed"),
             py::arg("stream"));
}

}  // namespace altgrad::python
