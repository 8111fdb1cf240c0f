// Replays inputs through a fuzz target without libFuzzer: the corpus and every case the fuzzers
// ever found (fuzz/regressions/), with the project's normal compiler, in the default test suite.
// usage: replay_TARGET [--timeout S] PATH...   (a PATH that is a folder: every file in it, sorted)
// Prints each input before running it, so a crash or sanitizer report names the input. An
// exception escaping the target (the targets catch the errors the readers document) fails the
// input; an input that runs longer than S seconds (default 30) ends the process as a hang.
// Exit status: 0 when every input passed, 1 when one failed (the others still ran), 2 for bad
// usage; a crash ends the process with its signal, a hang with status 3.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Where the replay is built with UBSan, its first report ends the process like a crash instead of
// being printed and passed over (libFuzzer builds do the same with -fno-sanitize-recover).
extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }

namespace {

namespace fs = std::filesystem;

char current_input[4096];

void on_alarm(int) {
  // Only async-signal-safe calls here.
  const char msg[] = "replay: HANG: no result within the time limit: ";
  (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)!write(STDERR_FILENO, current_input, std::strlen(current_input));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(3);
}

std::vector<std::string> inputs_of(const std::vector<std::string>& paths) {
  std::vector<std::string> inputs;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      inputs.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (const fs::directory_entry& e : fs::directory_iterator(path))
      if (e.is_regular_file() && e.path().filename().string().rfind('.', 0) != 0) found.push_back(e.path().string());
    std::sort(found.begin(), found.end());
    inputs.insert(inputs.end(), found.begin(), found.end());
  }
  return inputs;
}

// Runs one input; false (after saying why) when it failed without crashing.
bool replay(const std::string& input, unsigned timeout_s) {
  std::ifstream f(input, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "replay: FAIL: cannot read %s\n", input.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::snprintf(current_input, sizeof current_input, "%s", input.c_str());
  std::printf("replay: %s (%zu bytes)\n", input.c_str(), bytes.size());
  std::fflush(stdout);
  alarm(timeout_s);
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  } catch (const std::exception& e) {
    alarm(0);
    std::fprintf(stderr, "replay: FAIL: %s: unexpected exception: %s\n", input.c_str(), e.what());
    return false;
  } catch (...) {
    alarm(0);
    std::fprintf(stderr, "replay: FAIL: %s: unexpected exception of an unknown type\n", input.c_str());
    return false;
  }
  alarm(0);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned timeout_s = 30;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--timeout" && i + 1 < argc) {
      char* end = nullptr;
      const unsigned long v = std::strtoul(argv[++i], &end, 10);
      if (*end != '\0' || v == 0 || v > 86400) {
        std::fprintf(stderr, "replay: --timeout: '%s' is not a number of seconds in [1, 86400]\n", argv[i]);
        return 2;
      }
      timeout_s = static_cast<unsigned>(v);
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.empty()) {
    std::fprintf(stderr, "usage: %s [--timeout S] PATH...\n", argv[0]);
    return 2;
  }
  signal(SIGALRM, on_alarm);
  const std::vector<std::string> inputs = inputs_of(paths);
  int failed = 0;
  for (const std::string& input : inputs) failed += replay(input, timeout_s) ? 0 : 1;
  std::printf("replay: %zu inputs, %d failed\n", inputs.size(), failed);
  return failed == 0 ? 0 : 1;
}
