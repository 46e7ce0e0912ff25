// Recipes and quantization points for Python (altgrad.torch.quantize_model): a [quant] table read
// by the engine's own reader (recipe/recipe_table.hpp) and resolved against a model's point names
// by recipe::resolve, and the engine's PointQuantizer, one per enabled point, with its step
// boundaries, delayed-scaling history and per-axis copies. The kernels run without the GIL.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "bindings.hpp"
#include "config/config_error.hpp"
#include "recipe/recipe_table.hpp"
#include "format/rounding.hpp"
#include "quant/point_quantizer.hpp"
#include "recipe/recipe_spec.hpp"

namespace py = pybind11;

namespace altgrad::python {
namespace {

using FloatArray = py::array_t<float, py::array::c_style>;

// A recipe given as a dict becomes the TOML table a config would hold.
toml::table table_of(const py::dict& dict, const std::string& path);

// A list of tables ([[quant.override]]) or of strings (hadamard.gemms).
toml::array array_of(const py::list& list, const std::string& path) {
  toml::array out;
  for (const py::handle item : list) {
    if (py::isinstance<py::dict>(item)) {
      out.push_back(table_of(item.cast<py::dict>(), path));
    } else if (py::isinstance<py::str>(item)) {
      out.push_back(item.cast<std::string>());
    } else {
      throw py::type_error(path + ": a list in a recipe holds tables (dicts) or strings, got " +
                           std::string(py::str(py::type::handle_of(item).attr("__name__"))));
    }
  }
  return out;
}

toml::table table_of(const py::dict& dict, const std::string& path) {
  toml::table out;
  for (const auto& [key_handle, value] : dict) {
    if (!py::isinstance<py::str>(key_handle)) throw py::type_error(path + ": recipe keys are strings");
    const std::string key = key_handle.cast<std::string>();
    const std::string where = path.empty() ? key : path + "." + key;
    if (py::isinstance<py::bool_>(value)) {
      out.insert(key, value.cast<bool>());
    } else if (py::isinstance<py::int_>(value)) {
      out.insert(key, value.cast<std::int64_t>());
    } else if (py::isinstance<py::float_>(value)) {
      out.insert(key, value.cast<double>());
    } else if (py::isinstance<py::str>(value)) {
      out.insert(key, value.cast<std::string>());
    } else if (py::isinstance<py::dict>(value)) {
      out.insert(key, table_of(value.cast<py::dict>(), where));
    } else if (py::isinstance<py::list>(value)) {
      out.insert(key, array_of(value.cast<py::list>(), where));
    } else {
      throw py::type_error(where + ": a recipe value is a bool, int, float, str, dict or list, got " +
                           std::string(py::str(py::type::handle_of(value).attr("__name__"))));
    }
  }
  return out;
}

// A TOML text, parsed with `source` as its file name for messages.
toml::table parse_text(const std::string& text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw py::value_error(source + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
}

// A document holding one [quant] table (a config's) is read as that table; otherwise the document
// is the [quant] table itself. A reference, not a copy: a copied node loses its file and line.
const toml::table& quant_table_of(const toml::table& document) {
  const toml::table* quant = document.get_as<toml::table>("quant");
  return document.size() == 1 && quant != nullptr ? *quant : document;
}

recipe::Role role_of(const std::string& name) {
  if (name == "act") return recipe::Role::act;
  if (name == "weight") return recipe::Role::weight;
  if (name == "grad") return recipe::Role::grad;
  throw py::value_error("role '" + name + "' is not one of act, weight, grad");
}

// resolve_recipe(recipe, source, points): `recipe` is a TOML text or a dict; `points` lists
// (name, role, on_by_default). Returns (preset, seed or None, [(name, PointSettings)]).
py::tuple resolve_recipe(const py::object& recipe, const std::string& source,
                         const std::vector<std::tuple<std::string, std::string, bool>>& points) {
  const bool text = py::isinstance<py::str>(recipe);
  if (!text && !py::isinstance<py::dict>(recipe)) throw py::type_error("a recipe is a TOML string or a dict");
  const toml::table document = text ? parse_text(recipe.cast<std::string>(), source) : table_of(recipe.cast<py::dict>(), "");
  const toml::table& table = quant_table_of(document);
  // The reader names a value's file and line; a dict has neither, and its messages name `source`.
  const auto message = [&](const std::string& what) {
    return !text && what.starts_with("config: ") ? source + ": " + what.substr(8) : what;
  };
  recipe::ScheduleSpec read;
  std::vector<recipe::ResolvedPoint> resolved;
  std::vector<recipe::PointName> names;
  for (const auto& [name, role, on] : points) names.push_back({name, role_of(role), on});
  try {
    read = recipe::read_recipe_table(table);
    if (read.phases.size() > 1) {
      throw py::value_error(source + ": [[quant.phase]] is a schedule over training steps (altgrad train); "
                            "quantize_model applies one recipe");
    }
    const recipe::RecipeSpec& spec = read.phases.front().spec;
    if (recipe::emulated(spec.accumulate) || spec.accumulate_attention.emulated()) {
      throw py::value_error(source + ": accumulate: GEMM accumulation is emulated by the C++ engine (altgrad train) "
                            "and altgrad.gemm; quantize_model's matmuls are PyTorch's");
    }
    if (spec.hadamard.any()) {
      throw py::value_error(source + ": hadamard: a GEMM's Hadamard transforms are applied by the C++ engine "
                            "(altgrad train); quantize_model's matmuls are PyTorch's (altgrad.hadamard transforms a "
                            "tensor)");
    }
    for (const recipe::Override& o : spec.overrides) {
      if (!o.gemm) continue;
      throw py::value_error(message(o.origin + ": gemm = \"" + std::string(recipe::gemm_name(*o.gemm)) +
                                    "\": per-GEMM settings give each GEMM of a Linear its own copy in the C++ "
                                    "engine (altgrad train); quantize_model quantizes each tensor once for "
                                    "PyTorch's matmuls"));
    }
    resolved = recipe::resolve(read.phases.front().spec, names);
  } catch (const config::ConfigError& e) {
    throw py::value_error(message(e.what()));
  } catch (const quant::SettingsError& e) {
    throw py::value_error(message(e.what()));
  }
  py::list out;
  for (const recipe::ResolvedPoint& p : resolved) out.append(py::make_tuple(p.name, p.settings));
  const py::object seed = read.seed ? py::cast(*read.seed) : py::none();
  return py::make_tuple(read.phases.front().spec.preset, seed, out);
}

py::dict point_stats_dict(const quant::PointStats& s) {
  py::dict d = stats_dict(s.values);
  d["calls"] = s.calls;
  d["scale"] = s.scale;
  if (s.blocks > 0) {
    d["blocks"] = s.blocks;
    d["clipped_blocks"] = s.clipped_blocks;
  }
  return d;
}

// One call: `x` (rows, cols) quantized into `out` for the GEMM that reduces along its rows
// (along_rows: the column-wise copy) or along its columns. causal: x is causal attention
// probabilities in cols × cols tiles, whose masked zeros the statistics do not count.
py::dict apply(quant::PointQuantizer& point, const FloatArray& x, FloatArray& out, bool along_rows, bool frozen,
               bool causal) {
  if (x.ndim() != 2 || out.ndim() != 2 || out.shape(0) != x.shape(0) || out.shape(1) != x.shape(1)) {
    throw py::value_error("apply takes two float32 matrices of one shape");
  }
  const auto n = static_cast<std::size_t>(x.size());
  const quant::OperandLayout layout{static_cast<std::size_t>(x.shape(1)), along_rows, 0, causal};
  quant::PointStats stats;
  {
    py::gil_scoped_release release;
    stats = point.apply(std::span<const float>(x.data(), n), std::span<float>(out.mutable_data(), n), layout, frozen);
  }
  return point_stats_dict(stats);
}

py::dict settings_dict(const quant::PointSettings& s) {
  py::dict d;
  d["enabled"] = s.enabled;
  d["format"] = s.format_name;
  d["rounding"] = std::string(format::rounding_name(s.rounding));
  d["scaling"] = std::string(quant::scaling_name(s.scaling));
  d["history"] = s.history;
  d["amax"] = std::string(quant::amax_name(s.amax));
  d["margin"] = s.margin;
  if (s.block == quant::kAxisBlock) {
    d["block"] = std::string(quant::kAxisBlockName);
  } else {
    d["block"] = s.block;
  }
  d["scale_rule"] = std::string(quant::scale_rule_name(s.scale_rule));
  d["scale_format"] = std::string(quant::scale_format_name(s.scale_format));
  d["sr_bits"] = s.sr_bits;
  d["tile"] = s.tiles;
  return d;
}

}  // namespace

void bind_points(py::module_& m) {
  py::class_<quant::PointSettings>(m, "PointSettings", "How one point is quantized (recipe.json's fields)")
      .def_property_readonly("enabled", [](const quant::PointSettings& s) { return s.enabled; })
      .def_property_readonly("scaling", [](const quant::PointSettings& s) { return std::string(quant::scaling_name(s.scaling)); })
      .def_property_readonly("tile", [](const quant::PointSettings& s) { return s.tiles; })
      .def("as_dict", &settings_dict)
      .def("__repr__", [](const quant::PointSettings& s) { return "PointSettings(" + std::string(py::repr(settings_dict(s))) + ")"; });

  m.def("resolve_recipe", &resolve_recipe, py::arg("recipe"), py::arg("source"), py::arg("points"),
        "Reads a [quant] recipe (TOML text or dict) and resolves it for the given (name, role, "
        "on_by_default) points: (preset, seed or None, [(name, PointSettings)])");

  py::class_<quant::PointQuantizer>(m, "PointQuantizer", "The engine's quantizer of one point: scaling state and statistics")
      // quant::SettingsError is a std::invalid_argument, which pybind11 raises as ValueError with its message.
      .def(py::init<const quant::PointSettings&, std::uint64_t, std::uint64_t>(), py::arg("settings"),
           py::arg("seed"), py::arg("index"))
      .def("begin_step", [](quant::PointQuantizer& p, std::int64_t step, bool error_sums) {
             p.begin_step(step, error_sums ? quant::ErrorSums::gather : quant::ErrorSums::skip);
           }, py::arg("step"), py::arg("error_sums") = true,
           "error_sums=False: the step's calls skip the sums behind rel_error (the trainer's unlogged steps)")
      .def_property_readonly("settings", [](const quant::PointQuantizer& p) { return p.settings(); })
      .def("end_step", &quant::PointQuantizer::end_step)
      .def("apply", &apply, py::arg("x").noconvert(), py::arg("out").noconvert(), py::arg("along_rows"),
           py::arg("frozen"), py::arg("causal") = false)
      .def("step_stats", [](const quant::PointQuantizer& p) { return point_stats_dict(p.step_stats()); })
      .def("column_stats", [](const quant::PointQuantizer& p) { return point_stats_dict(p.column_stats()); })
      .def("delayed_state", [](const quant::PointQuantizer& p) -> py::object {
             if (p.delayed() == nullptr) return py::none();
             return py::make_tuple(p.delayed()->history(), p.delayed()->scale());
           }, "(amax history oldest first, scale) under delayed scaling, else None")
      .def("restore_delayed", [](quant::PointQuantizer& p, const std::vector<float>& history, float scale) {
             if (p.delayed() == nullptr) throw py::value_error("this point does not use delayed scaling");
             p.delayed()->restore(history, scale);  // a history longer than the point's: ValueError
           }, py::arg("history"), py::arg("scale"));
}

}  // namespace altgrad::python
