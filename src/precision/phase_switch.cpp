#include "precision/phase_switch.hpp"

namespace altgrad::precision {

bool keeps_scaling_state(const quant::PointSettings& before, const quant::PointSettings& after) {
  return before.enabled && after.enabled && before.format.spec == after.format.spec && before.scaling == after.scaling &&
         before.history == after.history && before.amax == after.amax && before.margin == after.margin &&
         before.block == after.block && before.scale_rule == after.scale_rule &&
         before.scale_format == after.scale_format;
}

nlohmann::json carry_scaling_state(const QuantHooks* from, QuantHooks* to) {
  nlohmann::json kept = nlohmann::json::array(), fresh = nlohmann::json::array();
  if (!to) return {{"kept", kept}, {"fresh", fresh}};
  for (std::size_t i = 0; i < to->size(); ++i) {
    quant::PointQuantizer* after = to->point(i);
    if (!after || !after->delayed()) continue;
    const quant::PointQuantizer* before = from ? from->point(i) : nullptr;
    if (before && before->delayed() && keeps_scaling_state(before->settings(), after->settings())) {
      after->delayed()->restore(before->delayed()->history(), before->delayed()->scale());
      kept.push_back(to->name(i));
    } else {
      fresh.push_back(to->name(i));
    }
  }
  return {{"kept", kept}, {"fresh", fresh}};
}

}  // namespace altgrad::precision
