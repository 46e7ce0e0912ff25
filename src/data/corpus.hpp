#pragma once
// Training text, loaded as raw bytes. The model sees byte-level tokens (vocabulary 256), because:
//   - there is no tokenizer to train, version or ship: a run depends only on the corpus bytes;
//   - every number format under test sees exactly the same token stream, so runs compare formats
//     and nothing else;
//   - any UTF-8 text is valid input, in any language, with no unknown tokens;
//   - 256 embedding rows of n_embd floats stay a small share of a ≤ 50M-parameter model (a 50k BPE
//     vocabulary would be most of it, and would dominate the quantization statistics too).
//
// Sources: one text file; a folder of .txt files (recursively); a JSONL file with one document per
// line. Every problem is a DataError naming the file (and line or byte offset) and what is wrong.
#include <array>
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace altgrad::data {

inline constexpr int kByteVocabSize = 256;

// Installed by scripts/setup_corpus.sh; relative to the repository root.
inline constexpr std::string_view kDefaultCorpus = "data/legal-corpus.txt";

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `automatic`: a folder is `dir`, a file ending in .jsonl is `jsonl`, anything else is `text`.
enum class CorpusFormat { automatic, text, dir, jsonl };
inline constexpr std::array<std::string_view, 4> kCorpusFormatNames = {"auto", "text", "dir", "jsonl"};

struct CorpusSource {
  std::filesystem::path path;
  CorpusFormat format = CorpusFormat::automatic;
  std::string jsonl_field = "text";  // which string field of each JSONL object holds the document
};

struct Corpus {
  std::string bytes;                 // valid UTF-8, never empty
  std::size_t documents = 0;         // files of a folder, lines of a JSONL file, 1 for a text file
  std::filesystem::path path;        // where it came from, for messages and run logs
  CorpusFormat format = CorpusFormat::text;  // the format actually read (never `automatic`)
};

// Reads a corpus. A folder's .txt files are found recursively and read in path order (compared
// element by element, byte-wise), so every machine sees the same bytes; files and JSONL documents
// are joined with a single "\n". Throws DataError on a missing or unreadable path, invalid UTF-8
// (file and byte offset), malformed JSONL (file:line), a folder without .txt files, or no text.
Corpus load_corpus(const CorpusSource& source);

// The corpus a run uses: `configured` when not empty (relative paths are relative to the working
// directory, as for every path a user types), else kDefaultCorpus under `repo_root`.
std::filesystem::path resolve_corpus_path(std::string_view configured, const std::filesystem::path& repo_root);

}  // namespace altgrad::data
