#pragma once
// What every fuzz target shares: a scratch directory per input (and a check that the reader wrote
// nothing outside it), inputs that hold several files, and the checks on error messages.
//
// A property that does not hold calls fail(), which prints why and aborts: libFuzzer then saves
// the input as a crash, like any sanitizer report.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace altgrad::fuzz {

[[noreturn]] void fail(const std::string& why);

// The input's bytes as text.
std::string_view as_text(std::span<const std::uint8_t> data);

// A file's whole contents.
std::string read_bytes(const std::filesystem::path& path);
void write_bytes(const std::filesystem::path& path, std::string_view bytes);

// A fresh, empty directory for one input, under a root made once per process. On destruction
// checks that nothing appeared beside it or in the working directory (a reader writing to a
// relative path) and that the files given to the reader are unchanged, then removes it. So run a
// target in a working directory nothing else writes to, as scripts/fuzz.sh does.
class Scratch {
 public:
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // Writes an input file under dir() and remembers its bytes; `name` may hold '/'.
  std::filesystem::path add(std::string_view name, std::string_view bytes);
  // A second directory under dir() for what the target itself writes (re-saves).
  std::filesystem::path output_dir(std::string_view name);

 private:
  std::filesystem::path dir_;
  std::map<std::filesystem::path, std::string> inputs_;
};

// Several named files in one input, the layout of the multi-file seed corpora:
//   @@ name\n<bytes>\n@@ name\n<bytes>\n ...
// A file's bytes run to the next "\n@@ " (or the end); text before the first "@@ " is ignored.
using Files = std::map<std::string, std::string, std::less<>>;
Files split_files(std::string_view input);
std::string join_files(const Files& files);

// A reader's error: its message must start with `path` and ": ", then say something.
void expect_message_names(std::string_view message, const std::filesystem::path& path);

}  // namespace altgrad::fuzz
