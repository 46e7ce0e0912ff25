// Training configs: a TOML file plus `--set` overrides ("@@ config.toml" and "@@ set" sections, one
// override a line; an input without sections is all TOML). load_config either returns a config
// that validate_config accepts, whose config_to_toml text loads back equal, and whose [quant] table
// resolves to a recipe (or a ConfigError) whose recipe.json form reads back the same; or it
// throws ConfigError starting with the file:line or the --set argument at fault.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "recipe/recipe.hpp"
#include "fuzz_support.hpp"
#include "model/matmul_points.hpp"

using namespace altgrad;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void expect_origin(const std::string& message, const fs::path& file) {
  if (!message.starts_with(file.string() + ":") && !message.starts_with("--set ")) {
    fuzz::fail("config error names neither the file nor a --set argument: " + message);
  }
}

void check_recipe(const config::TrainConfig& config, const fs::path& file) {
  const model::GptConfig gpt = config::gpt_config(config);
  if (gpt.n_layer > 64) return;  // a harness limit on work per input, not a reader rule
  recipe::Recipe recipe;
  try {
    recipe = recipe::resolve_recipe(config);
  } catch (const config::ConfigError& e) {
    expect_origin(e.what(), file);
    return;
  }
  const model::MatmulPoints points(gpt);
  const nlohmann::json json = recipe::recipe_to_json(recipe);
  const recipe::Recipe back = recipe::recipe_from_json(json, points, "recipe.json");
  if (recipe::recipe_to_json(back) != json) fuzz::fail("recipe.json does not read back as written");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = fuzz::as_text({data, size});
  const fuzz::Files files = fuzz::split_files(input);
  std::string toml(input);
  std::vector<std::string> overrides;
  if (!files.empty()) {
    const auto config = files.find("config.toml");
    toml = config == files.end() ? "" : config->second;
    if (const auto set = files.find("set"); set != files.end()) overrides = lines_of(set->second);
  }
  fuzz::Scratch scratch;
  const fs::path file = scratch.add("config.toml", toml);
  config::TrainConfig config;
  try {
    config = config::load_config(file, overrides);
  } catch (const config::ConfigError& e) {
    expect_origin(e.what(), file);
    return 0;
  }
  config::validate_config(config);
  const std::string written = config::config_to_toml(config);
  config::TrainConfig again;
  try {
    again = config::parse_config(written, "written.toml");
  } catch (const config::ConfigError& e) {
    fuzz::fail(std::string("config_to_toml wrote a config that does not load: ") + e.what() + "\n" + written);
  }
  if (!(again == config)) fuzz::fail("config_to_toml does not load back equal:\n" + written);
  check_recipe(config, file);
  return 0;
}
