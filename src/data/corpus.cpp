#include "data/corpus.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <system_error>
#include <vector>

#include "data/utf8.hpp"

namespace altgrad::data {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& path, const std::string& why) { throw DataError(path.string() + ": " + why); }

std::size_t line_of(std::string_view bytes, std::size_t offset) {
  return 1 + static_cast<std::size_t>(std::count(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

void require_utf8(const fs::path& path, std::string_view bytes) {
  if (const auto problem = find_invalid_utf8(bytes)) {
    fail(path, "invalid UTF-8 at byte offset " + std::to_string(problem->offset) + " (line " +
                   std::to_string(line_of(bytes, problem->offset)) + "): " + std::string(problem->reason));
  }
}

std::string read_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(path, "no such file or directory");
  if (fs::is_directory(path, ec)) fail(path, "is a directory (use data_format = \"dir\" or \"auto\")");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open for reading");
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) fail(path, "read failed");
  return bytes;
}

Corpus load_text(const fs::path& path) {
  Corpus corpus{read_file(path), 1, path, CorpusFormat::text};
  if (corpus.bytes.empty()) fail(path, "empty corpus (the file has 0 bytes)");
  require_utf8(path, corpus.bytes);
  return corpus;
}

std::vector<fs::path> txt_files_under(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) fail(dir, "no such file or directory");
  if (!fs::is_directory(dir, ec)) fail(dir, "is not a directory");
  std::vector<fs::path> files;
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".txt" && it->is_regular_file(ec)) files.push_back(it->path());
  }
  if (ec) fail(dir, "cannot list the folder: " + ec.message());
  // fs::path compares element by element with byte-wise string comparison on POSIX, independent
  // of the locale and of the order the file system returns entries in.
  std::sort(files.begin(), files.end());
  return files;
}

Corpus load_dir(const fs::path& dir) {
  const auto files = txt_files_under(dir);
  if (files.empty()) fail(dir, "the folder holds no .txt files (searched recursively)");
  Corpus corpus{{}, files.size(), dir, CorpusFormat::dir};
  std::size_t text_bytes = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string bytes = read_file(files[i]);
    require_utf8(files[i], bytes);
    text_bytes += bytes.size();
    if (i > 0) corpus.bytes += '\n';
    corpus.bytes += bytes;
  }
  if (text_bytes == 0) fail(dir, "empty corpus (all " + std::to_string(files.size()) + " .txt files are empty)");
  return corpus;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// The document on one JSONL line: the string value of `field` in a JSON object.
std::string jsonl_document(const fs::path& path, std::size_t line_number, std::string_view line,
                           const std::string& field) {
  const std::string where = path.string() + ":" + std::to_string(line_number) + ": ";
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past double
    throw DataError(where + "malformed JSON: " + e.what());
  }
  if (!value.is_object()) throw DataError(where + "expected a JSON object, got " + value.type_name());
  const auto found = value.find(field);
  if (found == value.end()) throw DataError(where + "the object has no \"" + field + "\" field");
  if (!found->is_string()) {
    throw DataError(where + "field \"" + field + "\" is " + found->type_name() + ", not a string");
  }
  return found->get<std::string>();
}

Corpus load_jsonl(const fs::path& path, const std::string& field) {
  const std::string file = read_file(path);
  require_utf8(path, file);  // before JSON parsing, so the message gives the byte offset
  Corpus corpus{{}, 0, path, CorpusFormat::jsonl};
  std::size_t line_number = 0, text_bytes = 0;
  for (std::size_t begin = 0; begin < file.size();) {
    const std::size_t end = std::min(file.find('\n', begin), file.size());
    const std::string_view line(file.data() + begin, end - begin);
    ++line_number;
    begin = end + 1;
    if (is_blank(line)) continue;  // a trailing newline or spacing between records
    const std::string document = jsonl_document(path, line_number, line, field);
    if (corpus.documents++ > 0) corpus.bytes += '\n';
    corpus.bytes += document;
    text_bytes += document.size();
  }
  if (text_bytes == 0) {
    fail(path, "empty corpus (" + std::to_string(corpus.documents) + " documents with a \"" + field + "\" field, no text)");
  }
  return corpus;
}

CorpusFormat detect_format(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return CorpusFormat::dir;
  if (path.extension() == ".jsonl") return CorpusFormat::jsonl;
  return CorpusFormat::text;
}

}  // namespace

Corpus load_corpus(const CorpusSource& source) {
  if (source.path.empty()) throw DataError("corpus path is empty");
  const CorpusFormat format = source.format == CorpusFormat::automatic ? detect_format(source.path) : source.format;
  switch (format) {
    case CorpusFormat::dir: return load_dir(source.path);
    case CorpusFormat::jsonl: return load_jsonl(source.path, source.jsonl_field);
    case CorpusFormat::text:
    case CorpusFormat::automatic: break;
  }
  return load_text(source.path);
}

std::filesystem::path resolve_corpus_path(std::string_view configured, const std::filesystem::path& repo_root) {
  if (!configured.empty()) return std::filesystem::path(configured);
  return repo_root / kDefaultCorpus;
}

}  // namespace altgrad::data
