// Damaged result files through the reader, built with AddressSanitizer and UBSan whenever the
// compiler has them (this binary compiles the results layer itself with $(SANITIZE_CXXFLAGS), so
// the reader's own code is instrumented; configure warns when it cannot): every truncation length and a bit flip at every 7th byte
// must give one clean RuntimeError naming the file -- no crash, no sanitizer report -- and
// hpcnn-summary's reader path (find + read) must go on to the next file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "results/result_file.hpp"

namespace fs = std::filesystem;
using namespace hpcnn;

// HDF5 is not instrumented and keeps process-lifetime allocations: leak checking would report the
// library, not the reader. Memory errors and undefined behaviour are still fatal.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr const char* kInstrumented = "AddressSanitizer + UBSan";
#else
constexpr const char* kInstrumented = "none (the compiler has no sanitizers)";
#endif
[[maybe_unused]] const bool kSaid = [] {
  std::printf("sanitizers in this binary: %s\n", kInstrumented);
  return true;
}();

std::vector<char> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void spill(const std::string& path, const std::vector<char>& bytes, std::size_t n) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(n));
}

// Reading must either throw one RuntimeError naming the file, or (never expected here) succeed.
void expect_clean_error(const std::string& path, const std::string& what) {
  try {
    read_result_file(path);
    ADD_FAILURE() << what << ": damaged file read without error";
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << what << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
  }
}

}  // namespace

TEST(ResultDamage, TruncatedAndCorruptedFilesFailCleanly) {
#if defined(__SANITIZE_ADDRESS__)
  std::printf("built with AddressSanitizer\n");
#else
  std::printf("note: not built with AddressSanitizer (./configure --enable-asan to get it)\n");
#endif
  std::string pattern = (fs::temp_directory_path() / "hpcnn-test-damage-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::string dir = pattern;
  std::string good;
  {
    ResultWriter w(dir + "/good", "hpcnn-train");
    ResultPoint p;
    p.record.set("suite", "hpcnn-train");
    p.record.set("model", "lenet5");
    p.record.set("batch", std::int64_t{8});
    p.record.set("img_per_s", 123.0);
    p.arrays.push_back({"iter_time_s", "s", {2, 3}, {1, 2, 3, 4, 5, 6}});
    w.add_point(p);
    Provenance prov;
    prov.command_line = "hpcnn-train --batch 8";
    prov.hosts = {"a"};
    good = w.commit(prov);
  }
  const std::vector<char> bytes = slurp(good);
  ASSERT_GT(bytes.size(), 1024u);
  ASSERT_NO_THROW(read_result_file(good));
  const std::string bad = dir + "/bad.h5";
  for (std::size_t n = 0; n < bytes.size(); n += n < 600 ? 1 : 97) {
    spill(bad, bytes, n);
    expect_clean_error(bad, "truncated to " + std::to_string(n));
  }
  for (std::size_t at = 0; at < bytes.size(); at += 7) {
    std::vector<char> flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5a);
    spill(bad, flipped, flipped.size());
    if (at < 512 && bytes[at] == 0) continue;  // padding of the checksum header: not checked
    if (at < 12) {  // a damaged magic line: read as a file without checksum block, which is intact
      EXPECT_NO_THROW(read_result_file(bad)) << "byte " << at;
      continue;
    }
    expect_clean_error(bad, "byte " + std::to_string(at) + " flipped");
  }
  // The reader path of hpcnn-summary: a damaged file among good ones is one error, the rest read.
  spill(dir + "/good/damaged.h5", bytes, bytes.size() / 2);
  int read = 0, failed = 0;
  for (const std::string& f : find_result_files({dir + "/good"})) {
    try {
      read_result_file(f);
      ++read;
    } catch (const RuntimeError&) {
      ++failed;
    }
  }
  EXPECT_EQ(read, 1);
  EXPECT_EQ(failed, 1);
  std::error_code ec;
  fs::remove_all(dir, ec);
}
