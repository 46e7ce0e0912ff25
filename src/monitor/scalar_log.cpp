#include "monitor/scalar_log.hpp"

namespace altgrad::monitor {
namespace {

bool is_histogram(const nlohmann::json& object) {
  return object.contains("counts") && object["counts"].is_array() && object.contains("lo");
}

void add(const std::string& tag, const nlohmann::json& value, ScalarLog& scalars) {
  if (value.is_boolean()) {
    scalars.add(tag, value.get<bool>() ? 1.0 : 0.0);
  } else if (value.is_number()) {
    scalars.add(tag, value.get<double>());
  } else if (value.is_object()) {
    const bool histogram = is_histogram(value);
    for (const auto& [key, child] : value.items()) {
      if (histogram && (key == "counts" || key == "lo" || key == "hi")) continue;
      add(tag.empty() ? key : tag + "/" + key, child, scalars);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) add(tag + "/" + std::to_string(i), value[i], scalars);
  }
}

}  // namespace

void add_scalars_of(const nlohmann::json& metrics, ScalarLog& scalars) {
  for (const auto& [key, value] : metrics.items()) {
    if (key != "step") add(key, value, scalars);
  }
}

}  // namespace altgrad::monitor
