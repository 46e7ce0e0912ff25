// Loading corpora: each source kind from files made here, the folder order, JSONL fields, and
// every error naming the file and the line or byte offset.
#include "data/corpus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using altgrad::data::Corpus;
using altgrad::data::CorpusFormat;
using altgrad::data::DataError;
using altgrad::data::load_corpus;
using altgrad::data::resolve_corpus_path;
using altgrad::test_support::mentions;
using altgrad::test_support::message_of;
using altgrad::test_support::ScratchDir;

std::string load_error(const fs::path& path, CorpusFormat format = CorpusFormat::automatic, std::string field = "text") {
  return message_of<DataError>([&] { load_corpus({path, format, field}); });
}

TEST(Corpus, ReadsATextFileAsItsExactBytes) {
  ScratchDir dir;
  const std::string text = "Line one.\r\nLigne deux : déjà vu.\n\tTabbed € line without newline";
  const auto file = dir.write("notes.txt", text);
  const Corpus corpus = load_corpus({file});
  EXPECT_EQ(corpus.bytes, text);
  EXPECT_EQ(corpus.documents, 1u);
  EXPECT_EQ(corpus.format, CorpusFormat::text);
  EXPECT_EQ(corpus.path, file);
}

TEST(Corpus, ReadsAnyExtensionAsTextUnlessItIsJsonl) {
  ScratchDir dir;
  const auto file = dir.write("corpus.md", "# heading\n");
  EXPECT_EQ(load_corpus({file}).bytes, "# heading\n");
  // Forcing `text` reads a .jsonl file as raw bytes.
  const auto jsonl = dir.write("raw.jsonl", "{\"text\": \"a\"}\n");
  EXPECT_EQ(load_corpus({jsonl, CorpusFormat::text}).bytes, "{\"text\": \"a\"}\n");
}

TEST(Corpus, ReadsAFolderRecursivelyInPathOrderJoinedByNewlines) {
  ScratchDir dir;
  dir.write("b.txt", "B");
  dir.write("a/z.txt", "AZ");
  dir.write("a/b/c.txt", "ABC\n");
  dir.write("A.txt", "upper");
  dir.write("a/skip.md", "not text");
  dir.write("a/data.json", "{}");
  const Corpus corpus = load_corpus({dir.path()});
  // Path order, element by element: "A.txt" < "a" < "b.txt"; inside a: "b/c.txt" < "z.txt".
  EXPECT_EQ(corpus.bytes, "upper\nABC\n\nAZ\nB");
  EXPECT_EQ(corpus.documents, 4u);
  EXPECT_EQ(corpus.format, CorpusFormat::dir);
}

TEST(Corpus, ReadsTheTextFieldOfEachJsonlLine) {
  ScratchDir dir;
  const auto file = dir.write("docs.jsonl",
                              "{\"id\": 1, \"text\": \"first doc\"}\n"
                              "\n"
                              "{\"text\": \"caf\\u00e9 \\\"quoted\\\"\\nsecond line\", \"extra\": [1, 2]}\r\n"
                              "{\"text\": \"\\ud834\\udd1e\"}\n");
  const Corpus corpus = load_corpus({file});
  EXPECT_EQ(corpus.bytes, "first doc\ncaf\xC3\xA9 \"quoted\"\nsecond line\n\xF0\x9D\x84\x9E");
  EXPECT_EQ(corpus.documents, 3u);
  EXPECT_EQ(corpus.format, CorpusFormat::jsonl);
}

TEST(Corpus, ReadsAConfiguredJsonlField) {
  ScratchDir dir;
  const auto file = dir.write("data.txt", "{\"content\": \"x\", \"text\": 5}\n{\"content\": \"y\"}\n");
  EXPECT_EQ(load_corpus({file, CorpusFormat::jsonl, "content"}).bytes, "x\ny");
}

TEST(Corpus, MissingPathNamesIt) {
  ScratchDir dir;
  const auto missing = dir.path() / "nowhere.txt";
  EXPECT_TRUE(mentions(load_error(missing), {missing.string(), "no such file"}));
  EXPECT_TRUE(mentions(load_error(dir.path() / "nowhere", CorpusFormat::dir), {"nowhere", "no such file"}));
  EXPECT_TRUE(mentions(load_error(dir.path() / "x.jsonl"), {"x.jsonl", "no such file"}));
}

TEST(Corpus, UnreadableFileNamesIt) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their permissions";
  ScratchDir dir;
  const auto file = dir.write("locked.txt", "secret");
  fs::permissions(file, fs::perms::none);
  EXPECT_TRUE(mentions(load_error(file), {"locked.txt", "cannot open"}));
}

TEST(Corpus, WrongKindOfPathForTheFormatIsAnError) {
  ScratchDir dir;
  const auto file = dir.write("a.txt", "text");
  EXPECT_TRUE(mentions(load_error(file, CorpusFormat::dir), {"a.txt", "not a directory"}));
  EXPECT_TRUE(mentions(load_error(dir.path(), CorpusFormat::text), {dir.path().string(), "is a directory"}));
}

TEST(Corpus, EmptyCorpusIsAnError) {
  ScratchDir dir;
  EXPECT_TRUE(mentions(load_error(dir.write("empty.txt", "")), {"empty.txt", "empty corpus"}));
  dir.write("folder/one.txt", "");
  dir.write("folder/two.txt", "");
  EXPECT_TRUE(mentions(load_error(dir.path() / "folder"), {"folder", "empty corpus"}));
  EXPECT_TRUE(mentions(load_error(dir.write("blank.jsonl", "\n\n")), {"blank.jsonl", "empty corpus"}));
  EXPECT_TRUE(mentions(load_error(dir.write("void.jsonl", "{\"text\": \"\"}\n")), {"void.jsonl", "empty corpus"}));
}

TEST(Corpus, FolderWithoutTxtFilesIsAnError) {
  ScratchDir dir;
  dir.write("docs/readme.md", "words");
  dir.write("docs/sub/TEXT.TXT", "upper-case extension is not .txt");
  EXPECT_TRUE(mentions(load_error(dir.path() / "docs"), {"docs", "no .txt files"}));
}

TEST(Corpus, InvalidUtf8NamesTheFileAndByteOffset) {
  ScratchDir dir;
  const auto file = dir.write("latin1.txt", "ok\nd\xE9j\xE0");  // Latin-1 é at byte 4
  EXPECT_TRUE(mentions(load_error(file), {"latin1.txt", "byte offset 4", "line 2"}));
  // In a folder, the message names the offending file, not the folder.
  dir.write("folder/a.txt", "fine");
  dir.write("folder/b.txt", "bad \xC0\x80");
  EXPECT_TRUE(mentions(load_error(dir.path() / "folder"), {"b.txt", "byte offset 4", "overlong"}));
  // In JSONL, raw bytes are checked before the JSON parser sees them.
  const auto jsonl = dir.write("bad.jsonl", "{\"text\": \"a\"}\n{\"text\": \"\xED\xA0\x80\"}\n");
  EXPECT_TRUE(mentions(load_error(jsonl), {"bad.jsonl", "byte offset 24", "surrogate"}));
}

TEST(Corpus, MalformedJsonlLineNamesFileAndLine) {
  ScratchDir dir;
  const auto file = dir.write("broken.jsonl", "{\"text\": \"a\"}\n{\"text\": \"b\"\n{\"text\": \"c\"}\n");
  EXPECT_TRUE(mentions(load_error(file), {"broken.jsonl:2:", "malformed JSON"}));
  // A number past double's range: nlohmann throws out_of_range, not parse_error (found by fuzzing).
  const auto overflow = dir.write("overflow.jsonl", "{\"text\": \"a\", \"n\": 1e999}\n");
  EXPECT_TRUE(mentions(load_error(overflow), {"overflow.jsonl:1:", "malformed JSON"}));
}

TEST(Corpus, JsonlLineWithoutTheFieldNamesFileLineAndField) {
  ScratchDir dir;
  const auto file = dir.write("docs.jsonl", "{\"text\": \"a\"}\n\n{\"body\": \"b\"}\n");
  EXPECT_TRUE(mentions(load_error(file), {"docs.jsonl:3:", "\"text\""}));
  EXPECT_TRUE(mentions(load_error(file, CorpusFormat::automatic, "body"), {"docs.jsonl:1:", "\"body\""}));
}

TEST(Corpus, JsonlFieldThatIsNotAStringIsAnError) {
  ScratchDir dir;
  EXPECT_TRUE(mentions(load_error(dir.write("n.jsonl", "{\"text\": 42}\n")), {"n.jsonl:1:", "\"text\"", "number", "not a string"}));
  EXPECT_TRUE(mentions(load_error(dir.write("o.jsonl", "{\"text\": \"a\"}\n{\"text\": {\"nested\": 1}}\n")),
                       {"o.jsonl:2:", "object", "not a string"}));
  EXPECT_TRUE(mentions(load_error(dir.write("a.jsonl", "[\"text\", \"a\"]\n")), {"a.jsonl:1:", "expected a JSON object", "array"}));
}

TEST(Corpus, DefaultPathIsTheLegalCorpusUnderTheRoot) {
  EXPECT_EQ(resolve_corpus_path("", "/repo"), fs::path("/repo/data/legal-corpus.txt"));
  EXPECT_EQ(resolve_corpus_path("my/books", "/repo"), fs::path("my/books"));
}

}  // namespace
