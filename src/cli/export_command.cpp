// `altgrad export --checkpoint DIR --out DIR`: a checkpoint's weights as nanoGPT loads them, every
// tensor in F32 (code-only weights decoded to their values), with config.json.
#include <cstdio>
#include <memory>
#include <string>

#include "checkpoint/checkpoint.hpp"
#include "cli/commands.hpp"

namespace altgrad::cli {

void add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Write a checkpoint's weights in F32 for nanoGPT (code-only weights decoded)");
  auto checkpoint = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("--checkpoint", *checkpoint, "Checkpoint directory, or a run directory (its latest)")->required();
  cmd->add_option("--out", *out, "Directory to write model.safetensors and config.json into")->required();
  cmd->callback([checkpoint, out] {
    checkpoint::export_model(checkpoint::resolve_checkpoint(*checkpoint), *out);
    std::printf("wrote %s/model.safetensors and %s/config.json\n", out->c_str(), out->c_str());
  });
}

}  // namespace altgrad::cli
