#pragma once
// The recipe tests' model: a 2-layer, 2-head, 32-channel GPT with a 16-byte context, whose config
// is this prefix and a [quant] table; its errors name "test.toml".
#include <stdexcept>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "recipe/recipe.hpp"
#include "support/error_message.hpp"

namespace altgrad::test_support {

inline config::TrainConfig config_with(const std::string& quant_toml) {
  return config::parse_config("n_layer = 2\nn_head = 2\nn_embd = 32\nblock_size = 16\n" + quant_toml, "test.toml");
}

// The settings of the point named `name`; throws std::out_of_range for a name the model lacks.
inline const quant::PointSettings& settings_at(const recipe::Recipe& recipe, std::string_view name) {
  for (const auto& p : recipe.points) {
    if (p.name == name) return p.settings;
  }
  throw std::out_of_range(std::string(name));
}

// The message of the config::ConfigError that resolving this config's recipe throws.
inline std::string recipe_error(const std::string& toml) {
  return message_of<config::ConfigError>([&] { (void)recipe::resolve_recipe(config_with(toml)); });
}

}  // namespace altgrad::test_support
