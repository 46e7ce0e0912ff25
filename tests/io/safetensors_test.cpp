// Safetensors checkpoints: files written by hand from the format's description read back, written
// files round-trip, and every kind of damage is reported with the file name instead of crashing.
#include "io/safetensors.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/atomic_file.hpp"

namespace {

namespace fs = std::filesystem;
using altgrad::io::CheckpointError;
using altgrad::io::read_safetensors;
using altgrad::io::TensorRef;
using altgrad::io::write_safetensors;

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("altgrad_safetensors_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path file(const std::string& name) const { return dir_ / name; }

  static void write_bytes(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  static std::string read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // A file laid out by hand: u64 little-endian header length, JSON header, data bytes.
  static std::string hand_made(const std::string& header, const std::vector<float>& values) {
    std::string out(8, '\0');
    const std::uint64_t length = header.size();
    std::memcpy(out.data(), &length, 8);
    out += header;
    out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    return out;
  }

  fs::path dir_;
};

TEST_F(SafetensorsTest, ReadsAFileLaidOutByHand) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("a":{"dtype":"F32","shape":[1,2],"data_offsets":[8,16]}})";
  write_bytes(file("hand.safetensors"), hand_made(header, {1.0f, 2.0f, -3.5f, 0.25f}));
  const auto loaded = read_safetensors(file("hand.safetensors"));
  EXPECT_EQ(loaded.metadata.at("format"), "pt");
  EXPECT_EQ(loaded.tensors.at("b").data, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(loaded.tensors.at("a").shape, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(loaded.tensors.at("a").data, (std::vector<float>{-3.5f, 0.25f}));
}

TEST_F(SafetensorsTest, WrittenFilesRoundTripAndFollowTheLayout) {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6}, b = {-1, 0.5f};
  const std::vector<TensorRef> tensors = {{"w", {2, 3}, w}, {"b", {2}, b}};
  write_safetensors(file("rt.safetensors"), tensors, {{"step", "7"}});
  const auto loaded = read_safetensors(file("rt.safetensors"));
  EXPECT_EQ(loaded.tensors.at("w").data, w);
  EXPECT_EQ(loaded.tensors.at("w").shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(loaded.tensors.at("b").data, b);
  EXPECT_EQ(loaded.metadata.at("step"), "7");
  // The data section starts 8-byte aligned and holds exactly the tensors' bytes.
  const std::string bytes = read_bytes(file("rt.safetensors"));
  std::uint64_t header_length = 0;
  std::memcpy(&header_length, bytes.data(), 8);
  EXPECT_EQ(header_length % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + header_length + (w.size() + b.size()) * sizeof(float));
}

TEST_F(SafetensorsTest, EveryTruncationIsAnErrorNamingTheFile) {
  const std::vector<float> w(10, 1.5f);
  write_safetensors(file("full.safetensors"), std::vector<TensorRef>{{"w", {10}, w}});
  const std::string bytes = read_bytes(file("full.safetensors"));
  for (std::size_t keep = 0; keep < bytes.size(); ++keep) {
    write_bytes(file("cut.safetensors"), bytes.substr(0, keep));
    try {
      read_safetensors(file("cut.safetensors"));
      FAIL() << "a file cut to " << keep << " of " << bytes.size() << " bytes was accepted";
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("cut.safetensors"), std::string::npos) << e.what();
    }
  }
}

TEST_F(SafetensorsTest, CorruptHeadersAreErrorsThatSayWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "not valid JSON"},
      {R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,8]}})", "F16"},
      {R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", "bytes for a shape"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,80]}})", "exceed"},
      {R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", "shape"},
      {R"({"w":{"dtype":"F32","shape":[2]}})", "data_offsets"},
      {R"([1,2])", "not a JSON object"},
      {R"({"__metadata__":"pt"})", "__metadata__ is not a JSON object"},
      // A number past double's range: nlohmann throws out_of_range, not parse_error (found by fuzzing).
      {R"({"n":4444444e444})", "not valid JSON"},
  };
  for (const auto& [header, expected] : cases) {
    write_bytes(file("bad.safetensors"), hand_made(header, {1.0f, 2.0f}));
    try {
      read_safetensors(file("bad.safetensors"));
      FAIL() << "accepted header " << header;
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST_F(SafetensorsTest, ShapeMismatchAndDuplicateNamesAreRefusedBeforeWriting) {
  const std::vector<float> w(5, 0.0f);
  EXPECT_THROW(write_safetensors(file("x.safetensors"), std::vector<TensorRef>{{"w", {2, 3}, w}}), CheckpointError);
  EXPECT_THROW(write_safetensors(file("x.safetensors"), std::vector<TensorRef>{{"w", {5}, w}, {"w", {5}, w}}),
               CheckpointError);
  EXPECT_FALSE(fs::exists(file("x.safetensors")));
}

TEST_F(SafetensorsTest, AnInterruptedWriteLeavesThePreviousFileIntact) {
  const std::vector<float> old_values = {1, 2, 3};
  write_safetensors(file("ckpt.safetensors"), std::vector<TensorRef>{{"w", {3}, old_values}});
  const std::string before = read_bytes(file("ckpt.safetensors"));
  EXPECT_THROW(altgrad::io::write_file_atomically(file("ckpt.safetensors"),
                                                     [](std::ostream& out) {
                                                       out << "partial";
                                                       throw std::runtime_error("interrupted");
                                                     }),
               std::runtime_error);
  EXPECT_EQ(read_bytes(file("ckpt.safetensors")), before);
  // No temporary is left behind.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1u);
}

// Found by fuzz/safetensors_fuzzer.cpp (fuzz/corpus/safetensors/regress_*).
TEST_F(SafetensorsTest, AFileWithNoTensorsAndNoMetadataRoundTrips) {
  write_safetensors(file("empty.safetensors"), {});
  const auto loaded = read_safetensors(file("empty.safetensors"));
  EXPECT_TRUE(loaded.tensors.empty());
  EXPECT_TRUE(loaded.metadata.empty());
  const std::string bytes = read_bytes(file("empty.safetensors"));
  EXPECT_EQ(bytes.substr(8, 2), "{}");  // an empty JSON object, as the format requires
}

TEST_F(SafetensorsTest, ZeroElementTensorsReadFromAFileWithoutDataBytes) {
  write_bytes(file("zero.safetensors"), hand_made(R"({"t":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]}})", {}));
  const auto loaded = read_safetensors(file("zero.safetensors"));
  EXPECT_EQ(loaded.tensors.at("t").shape, (std::vector<std::int64_t>{0, 3}));
  EXPECT_TRUE(loaded.tensors.at("t").data.empty());
}

TEST_F(SafetensorsTest, AShapeWhoseSizeOverflowsIsAnErrorNotAWrappedCount) {
  // 2^62 · 4 · 0 elements: the running product passes 2^64 bytes before the 0 brings it back.
  write_bytes(file("huge.safetensors"),
              hand_made(R"({"t":{"dtype":"F32","shape":[4611686018427387904,4,0],"data_offsets":[0,0]}})", {}));
  try {
    read_safetensors(file("huge.safetensors"));
    ADD_FAILURE() << "accepted a shape of more than 2^64 bytes";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(file("huge.safetensors").string() + ": tensor 't': shape", 0), 0u) << what;
    EXPECT_NE(what.find("2^64"), std::string::npos) << what;
  }
}

}  // namespace
