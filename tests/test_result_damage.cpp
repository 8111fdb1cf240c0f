// Damaged result files through the reader, built with AddressSanitizer and UBSan whenever the
// compiler has them (this binary compiles the results layer itself with $(SANITIZE_CXXFLAGS), so
// the reader's own code is instrumented; configure warns when it cannot): every truncation length and a bit flip at every 7th byte
// must give one clean RuntimeError naming the file -- no crash, no sanitizer report -- and
// hpcnn-summary's reader path (find + read) must go on to the next file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "results/isolated_read.hpp"
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

// ---------------------------------------------------------------------------------------------
// Every file is untrusted: a damaged checksum header does not turn the check off, and the HDF5
// parse runs in a child process whose hang, crash or exhausted memory is one error naming the file.

namespace {

// A fresh directory removed at the end of the test.
struct Scratch {
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "hpcnn-test-isolated-XXXXXX").string();
    if (mkdtemp(pattern.data())) dir = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string dir;
};

std::string write_good_file(const std::string& dir) {
  ResultWriter w(dir, "hpcnn-infer");
  ResultPoint p;
  p.record.set("suite", "hpcnn-infer");
  p.record.set("model", "resnet18");
  p.record.set("batch", std::int64_t{16});
  p.record.set("img_per_s", 456.25);
  p.arrays.push_back({"iter_time_s", "s", {3}, {0.5, 0.25, 0.125}});
  p.status = PointStatus::Diverged;
  p.status_reason = "loss NaN";
  w.add_point(p);
  Provenance prov;
  prov.suite = "hpcnn-infer";
  prov.command_line = "hpcnn-infer --batch 16";
  prov.hosts = {"node1", "node2"};
  prov.mpi_size = 2;
  prov.restarts = 1;
  prov.libraries = {{"hdf5", "1.10"}};
  prov.settings = {{"batch", "16"}};
  return w.commit(prov);
}

// `fn` must throw one RuntimeError whose single line holds every part of `parts`; returns the
// seconds it took.
template <typename Fn>
double expect_error_with(Fn fn, const std::vector<std::string>& parts) {
  const auto start = std::chrono::steady_clock::now();
  try {
    fn();
    ADD_FAILURE() << "no RuntimeError thrown";
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    for (const auto& part : parts) EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST(UntrustedFiles, DamagedHeaderByteIsRejectedWithTheFileName) {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  const std::string good = write_good_file(s.dir + "/good");
  const std::vector<char> bytes = slurp(good);
  const std::string bad = s.dir + "/header.h5";
  // Every byte of the magic line "hpcnn-result\n": one changed byte must not turn the check off.
  for (std::size_t at = 0; at < 13; ++at) {
    std::vector<char> damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x20);
    spill(bad, damaged, damaged.size());
    expect_error_with([&] { read_result_file(bad); }, {bad, "its header is damaged"});
  }
  // A file without the header (foreign, or its user block wiped) is never handed to HDF5 either.
  std::vector<char> wiped = bytes;
  std::fill(wiped.begin(), wiped.begin() + 512, '\0');
  spill(bad, wiped, wiped.size());
  expect_error_with([&] { read_result_file_isolated(bad); }, {bad, "not an hpcnn result file"});
}

TEST(UntrustedFiles, IsolatedReadGivesTheSameRun) {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  const std::string good = write_good_file(s.dir);
  const ResultRun direct = read_result_file(good);
  const ResultRun isolated = read_result_file_isolated(good);
  // The encoding is exact (doubles by their bits): the same bytes encode the same run.
  EXPECT_EQ(encode_run(isolated), encode_run(direct));
  EXPECT_EQ(isolated.path, good);
  EXPECT_EQ(isolated.provenance.hosts, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(isolated.provenance.restarts, 1);
  ASSERT_EQ(isolated.points.size(), 1u);
  EXPECT_EQ(isolated.points[0].record.text("model"), "resnet18");
  EXPECT_EQ(*isolated.points[0].record.number("img_per_s"), 456.25);
  ASSERT_EQ(isolated.points[0].arrays.size(), 1u);
  EXPECT_EQ(isolated.points[0].arrays[0].data, (std::vector<double>{0.5, 0.25, 0.125}));
  EXPECT_EQ(isolated.points[0].arrays[0].unit, "s");
  // A run with a status other than ok round-trips through the encoding too.
  ResultRun run = direct;
  run.points[0].status = PointStatus::Diverged;
  run.points[0].status_reason = "loss NaN";
  const ResultRun back = decode_run(encode_run(run), good);
  EXPECT_EQ(back.points[0].status, PointStatus::Diverged);
  EXPECT_EQ(back.points[0].status_reason, "loss NaN");
}

TEST(UntrustedFiles, MalformedRepliesAreRejected) {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  const std::string encoded = encode_run(read_result_file(write_good_file(s.dir)));
  // Every truncation, and a count of 2^62 in place of the path's length, fail cleanly.
  for (std::size_t n = 0; n < encoded.size(); n += 5)
    expect_error_with([&] { decode_run(encoded.substr(0, n), "f.h5"); }, {"f.h5", "malformed reply"});
  std::string huge = encoded;
  huge[7] = 0x40;
  expect_error_with([&] { decode_run(huge, "f.h5"); }, {"f.h5", "malformed reply"});
  expect_error_with([&] { decode_run(encoded + "x", "f.h5"); }, {"f.h5", "malformed reply"});
}

TEST(UntrustedFiles, HangInTheReaderIsStoppedWithinTheLimit) {
  IsolationLimits limits;
  limits.seconds = 1;
  const double took = expect_error_with(
      [&] {
        run_isolated([]() -> std::string {
          volatile unsigned long spins = 0;
          for (;;) spins = spins + 1;
        }, limits, "hang.h5");
      },
      {"hang.h5", "did not finish within 1 s"});
  EXPECT_LT(took, 10.0);
  // A reader blocked (not spinning) is stopped too.
  expect_error_with([&] { run_isolated([]() -> std::string { pause(); return ""; }, limits, "blocked.h5"); },
                    {"blocked.h5", "did not finish within 1 s"});
}

// Several children at a time from one thread: each job's outcome in its place, a hung one costing
// its own limit while the others finish, and a good file read as it is among them.
TEST(UntrustedFiles, SeveralReadersAtOnceKeepTheirOwnOutcomes) {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  IsolationLimits quick;
  quick.seconds = 30;
  IsolationLimits short_limit;
  short_limit.seconds = 1;
  std::vector<IsolatedJob> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back({[i] { return "reply " + std::to_string(i); }, quick, "j" + std::to_string(i)});
  jobs[2] = {[]() -> std::string { pause(); return ""; }, short_limit, "hang.h5"};
  jobs[4] = {[]() -> std::string { throw RuntimeError("bad.h5: reason"); }, quick, "bad.h5"};
  const auto start = std::chrono::steady_clock::now();
  const std::vector<IsolatedResult> results = run_isolated_all(jobs, 3);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  ASSERT_EQ(results.size(), jobs.size());
  for (int i : {0, 1, 3, 5}) {
    EXPECT_TRUE(results[i].ok) << i << ": " << results[i].error;
    EXPECT_EQ(results[i].reply, "reply " + std::to_string(i));
  }
  EXPECT_FALSE(results[2].ok);
  EXPECT_NE(results[2].error.find("hang.h5: the reader did not finish within 1 s"), std::string::npos) << results[2].error;
  EXPECT_FALSE(results[4].ok);
  EXPECT_EQ(results[4].error, "bad.h5: reason");
  // Files: a good one twice and a missing one, each read in its place.
  const std::string good = write_good_file(s.dir), missing = s.dir + "/missing.h5";
  const std::vector<IsolatedRead> reads = read_result_files_isolated({good, missing, good}, 2);
  ASSERT_EQ(reads.size(), 3u);
  ASSERT_TRUE(reads[0].run && reads[2].run) << reads[0].error << reads[2].error;
  EXPECT_EQ(encode_run(*reads[0].run), encode_run(read_result_file(good)));
  EXPECT_EQ(encode_run(*reads[2].run), encode_run(*reads[0].run));
  EXPECT_FALSE(reads[1].run);
  EXPECT_NE(reads[1].error.find(missing), std::string::npos) << reads[1].error;
}

// The children run side by side, a reply larger than a pipe's buffer arrives whole, something
// thrown that is no exception class ends its own job only (it must not unwind into the test in the
// child), and the call leaves no descriptor open and no child unreaped.
TEST(UntrustedFiles, ReadersRunTogetherAndLeaveNothingBehind) {
  const auto open_descriptors = [] {
    return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator());
  };
  IsolationLimits limits;
  limits.seconds = 30;
  std::string big(std::size_t{1} << 20, '\0');
  for (std::size_t k = 0; k < big.size(); ++k) big[k] = static_cast<char>(k * 131 % 251);
  std::vector<IsolatedJob> jobs;
  for (int i = 0; i < 3; ++i)
    jobs.push_back({[i] { sleep(2); return "slept " + std::to_string(i); }, limits, "s" + std::to_string(i)});
  jobs.push_back({[big] { return big; }, limits, "big.h5"});
  jobs.push_back({[]() -> std::string { throw 42; }, limits, "odd.h5"});
  const auto descriptors = open_descriptors();
  const auto start = std::chrono::steady_clock::now();
  const std::vector<IsolatedResult> results = run_isolated_all(jobs, 3);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 5.0) << "three 2 s readers, three at a time, took as long as one after another";
  ASSERT_EQ(results.size(), jobs.size());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(results[i].reply, "slept " + std::to_string(i)) << results[i].error;
  EXPECT_TRUE(results[3].ok) << results[3].error;
  EXPECT_TRUE(results[3].reply == big) << "the 1 MiB reply came back as " << results[3].reply.size() << " other bytes";
  EXPECT_FALSE(results[4].ok);
  EXPECT_NE(results[4].error.find("odd.h5: the reader failed without saying why"), std::string::npos) << results[4].error;
  EXPECT_EQ(open_descriptors(), descriptors);
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD) << "a reader was left unreaped";
}

// A process that inherited SIGCHLD ignored (from a launcher that ignored it) still gets its
// readers' outcomes, and keeps its own disposition afterwards.
TEST(UntrustedFiles, AnIgnoredChildSignalLosesNoReply) {
  struct sigaction ignore {}, before {}, after {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &before), 0);
  IsolationLimits limits;
  limits.seconds = 30;
  std::string reply, error;
  try {
    reply = run_isolated([] { return std::string("read"); }, limits, "ok.h5");
  } catch (const RuntimeError& e) {
    error = e.what();
  }
  ::sigaction(SIGCHLD, &before, &after);
  EXPECT_EQ(reply, "read") << error;
  EXPECT_EQ(after.sa_handler, SIG_IGN) << "the caller's SIGCHLD disposition was not given back";
}

TEST(UntrustedFiles, CrashInTheReaderIsOneError) {
  IsolationLimits limits;
  limits.seconds = 30;
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer catches the signal itself, prints its report and exits with status 1.
  const std::vector<std::string> crashed = {"crash.h5", "without a reply"};
#else
  const std::vector<std::string> crashed = {"crash.h5", "crashed", "signal 11"};
#endif
  expect_error_with([&] { run_isolated([]() -> std::string { raise(SIGSEGV); return ""; }, limits, "crash.h5"); },
                    crashed);
  expect_error_with([&] { run_isolated([]() -> std::string { _exit(5); }, limits, "exit.h5"); },
                    {"exit.h5", "without a reply", "exit status 5"});
  // A clean error in the child comes back as it is, and the parent goes on.
  expect_error_with([&] { run_isolated([]() -> std::string { throw RuntimeError("x.h5: reason"); }, limits, "x.h5"); },
                    {"x.h5: reason"});
  EXPECT_EQ(run_isolated([] { return std::string("payload\0with nul", 16); }, limits, "ok.h5"),
            std::string("payload\0with nul", 16));
}

TEST(UntrustedFiles, MemoryBeyondTheLimitIsOneError) {
  IsolationLimits limits;
  limits.seconds = 30;
  limits.memory_bytes = std::size_t{64} << 20;
  const auto allocate = []() -> std::string {
    std::vector<char> big(std::size_t{1} << 30, 1);  // 1 GiB, 16 times the limit
    return std::string(1, big[big.size() / 2]);
  };
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's allocator ends the process itself when memory runs out (no bad_alloc).
  expect_error_with([&] { run_isolated(allocate, limits, "big.h5"); }, {"big.h5"});
#else
  expect_error_with([&] { run_isolated(allocate, limits, "big.h5"); }, {"big.h5", "more than the limit of 64 MiB"});
#endif
}

// What stands where a result file should be is said as what it is, and nothing blocks on a FIFO
// or reads /dev/zero forever.
TEST(UntrustedFiles, NonFilesAreNamedWithoutOpeningThem) {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  const std::string fifo = s.dir + "/fifo.h5", loop = s.dir + "/loop.h5", dir = s.dir + "/dir.h5",
                    zero = s.dir + "/zero.h5";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink(loop, loop);
  fs::create_directory(dir);
  fs::create_symlink("/dev/zero", zero);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {fifo, "is a FIFO"}, {loop, "symlink loop"}, {dir, "is a directory"}, {zero, "is a character device"}};
  for (const auto& [path, what] : cases) {
    expect_error_with([&] { read_result_file(path); }, {path + ": " + what});
    expect_error_with([&] { read_result_file_isolated(path); }, {path + ": " + what});
  }
}
