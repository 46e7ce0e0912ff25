#include "fuzz_support.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

namespace altgrad::fuzz {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFileMark = "@@ ";

std::set<fs::path> entries(const fs::path& dir);

// The process's scratch root, made on first use, and the names in the working directory then (a
// reader writing to a relative path would add one). libFuzzer reads its corpus by relative paths,
// so the working directory stays where it was.
struct Root {
  fs::path root;
  fs::path cwd;
  std::set<fs::path> cwd_entries;
  Root() {
    std::string pattern = (fs::temp_directory_path() / "altgrad-fuzz-XXXXXX").string();
    if (!mkdtemp(pattern.data())) fail("cannot create a scratch directory");
    root = pattern;
    cwd = fs::current_path();
    cwd_entries = entries(cwd);
    std::atexit([] { std::error_code ec; fs::remove_all(instance().root, ec); });
  }
  static Root& instance() {
    static Root r;
    return r;
  }
};

std::set<fs::path> entries(const fs::path& dir) {
  std::set<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir)) found.insert(e.path().filename());
  return found;
}

}  // namespace

void fail(const std::string& why) {
  std::fprintf(stderr, "fuzz property violated: %s\n", why.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string_view as_text(std::span<const std::uint8_t> data) {
  return {reinterpret_cast<const char*>(data.data()), data.size()};
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, std::string_view bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write " + path.string());
}

Scratch::Scratch() : dir_(Root::instance().root / "input") {
  fs::remove_all(dir_);
  fs::create_directory(dir_);
}

Scratch::~Scratch() {
  const Root& r = Root::instance();
  if (entries(r.root) != std::set<fs::path>{"input"}) fail("something was written beside the input directory");
  if (entries(r.cwd) != r.cwd_entries) fail("something was written into the working directory");
  for (const auto& [path, bytes] : inputs_) {
    if (!fs::is_regular_file(path) || read_bytes(path) != bytes) fail("the reader changed its input " + path.string());
  }
  fs::remove_all(dir_);
}

fs::path Scratch::add(std::string_view name, std::string_view bytes) {
  const fs::path path = dir_ / fs::path(name);
  write_bytes(path, bytes);
  inputs_[path] = std::string(bytes);
  return path;
}

fs::path Scratch::output_dir(std::string_view name) {
  const fs::path path = dir_ / fs::path(name);
  fs::create_directories(path);
  return path;
}

Files split_files(std::string_view input) {
  Files files;
  std::size_t at = input.starts_with(kFileMark) ? 0 : input.find(std::string("\n") + std::string(kFileMark));
  if (at != 0 && at != std::string_view::npos) ++at;
  while (at != std::string_view::npos && at < input.size()) {
    const std::size_t name_begin = at + kFileMark.size();
    const std::size_t name_end = input.find('\n', name_begin);
    if (name_end == std::string_view::npos) break;
    const std::size_t next = input.find(std::string("\n") + std::string(kFileMark), name_end);
    // join_files ends every file with a newline, the last one too.
    const std::size_t bytes_end =
        next != std::string_view::npos ? next : input.size() - (input.ends_with('\n') && input.size() > name_end + 1);
    files[std::string(input.substr(name_begin, name_end - name_begin))] =
        std::string(input.substr(name_end + 1, bytes_end - std::min(bytes_end, name_end + 1)));
    at = next == std::string_view::npos ? next : next + 1;
  }
  return files;
}

std::string join_files(const Files& files) {
  std::string out;
  for (const auto& [name, bytes] : files) out += std::string(kFileMark) + name + "\n" + bytes + "\n";
  return out;
}

void expect_message_names(std::string_view message, const fs::path& path) {
  const std::string prefix = path.string() + ": ";
  if (!message.starts_with(prefix) || message.size() == prefix.size()) {
    fail("error message does not start with '" + prefix + "' and a reason: " + std::string(message));
  }
}

}  // namespace altgrad::fuzz
