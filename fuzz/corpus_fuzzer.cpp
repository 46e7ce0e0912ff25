// Corpora: the first byte picks the source (text file, JSONL file, folder), the rest is its bytes
// (a folder's files as "@@ name" sections, see fuzz_support.hpp). load_corpus either returns
// non-empty, valid UTF-8 text (checked by a decoder written here from the Unicode standard's
// table 3-7, independent of data/utf8.cpp) that is exactly what the source holds, or throws
// DataError naming a file under the input directory.
#include <cstdint>
#include <optional>
#include <string>

#include "data/corpus.hpp"
#include "data/utf8.hpp"
#include "fuzz_support.hpp"

using namespace altgrad;
namespace fs = std::filesystem;

namespace {

// Length of the well-formed sequence starting at bytes[i], or 0. Code point ranges per length:
// 1: 0..7F; 2: 80..7FF; 3: 800..FFFF minus D800..DFFF; 4: 10000..10FFFF.
std::size_t sequence_length(std::string_view bytes, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(bytes[k]); };
  const std::uint8_t lead = byte(i);
  const std::size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > bytes.size()) return 0;
  std::uint32_t cp = n == 1 ? lead : lead & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool valid_utf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = sequence_length(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// The validator and the reference agree on whether, and where, bytes stop being UTF-8.
void check_validator(std::string_view bytes) {
  std::optional<std::size_t> first_bad;
  for (std::size_t i = 0; i < bytes.size() && !first_bad;) {
    const std::size_t n = sequence_length(bytes, i);
    if (n == 0) first_bad = i;
    i += n;
  }
  const auto problem = data::find_invalid_utf8(bytes);
  if (problem.has_value() != first_bad.has_value() || (problem && problem->offset != *first_bad)) {
    fuzz::fail("find_invalid_utf8 disagrees with the reference decoder");
  }
}

// A relative path of plain names (letters, digits, '.', '_'), none of them "." or ".." or too long
// for a file name, so that every file stays inside the folder and is a file.
bool plain_relative_name(const std::string& name) {
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._/") != std::string::npos) return false;
  for (std::size_t begin = 0; begin <= name.size();) {
    const std::size_t end = std::min(name.find('/', begin), name.size());
    const std::string_view part(name.data() + begin, end - begin);
    // Longer components are not files that a folder corpus can hold (NAME_MAX is 255 bytes on Linux).
    if (part.empty() || part == "." || part == ".." || part.size() > 255) return false;
    begin = end + 1;
  }
  return true;
}

bool under(const fs::path& file, const fs::path& dir) {
  const std::string f = file.string(), d = dir.string() + "/";
  return f.starts_with(d) || file == dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes = fuzz::as_text({data + 1, size - 1});
  check_validator(bytes);
  fuzz::Scratch scratch;
  data::CorpusSource source;
  switch (data[0] % 3) {
    case 0: source = {scratch.add("corpus.txt", bytes), data::CorpusFormat::automatic}; break;
    case 1: source = {scratch.add("corpus.jsonl", bytes), data::CorpusFormat::automatic}; break;
    default: {
      source = {scratch.dir() / "folder", data::CorpusFormat::automatic};
      fs::create_directories(source.path);
      for (const auto& [name, contents] : fuzz::split_files(bytes)) {
        // "a/b.txt" then "a": the first one wins.
        if (!plain_relative_name(name) || fs::exists(source.path / name)) continue;
        try {
          scratch.add("folder/" + name, contents);
        } catch (const fs::filesystem_error&) {
          // "a" then "a/b.txt": the first one wins
        }
      }
    }
  }
  data::Corpus corpus;
  try {
    corpus = data::load_corpus(source);
  } catch (const data::DataError& e) {
    const std::string message = e.what();
    if (!message.starts_with(scratch.dir().string() + "/") || message.find(": ") == std::string::npos) {
      fuzz::fail("error message does not name a file under the input: " + message);
    }
    if (data[0] % 3 == 0 && !bytes.empty() && valid_utf8(bytes)) fuzz::fail("refused valid text: " + message);
    return 0;
  }
  if (corpus.bytes.empty() || !valid_utf8(corpus.bytes)) fuzz::fail("loaded text that is empty or not UTF-8");
  if (!under(corpus.path, scratch.dir())) fuzz::fail("corpus path is outside the input");
  if (data[0] % 3 == 0 && (corpus.bytes != bytes || corpus.documents != 1)) fuzz::fail("a text file loaded other bytes");
  if (corpus.documents == 0) fuzz::fail("a corpus without documents");
  return 0;
}
