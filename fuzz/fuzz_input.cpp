#include "fuzz/fuzz_input.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hpcnn::fuzz {

namespace {

// A private temporary file, for systems (or seccomp profiles) without memfd_create.
int temporary_file(std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  name = std::string(dir && *dir ? dir : "/tmp") + "/hpcnn-fuzz-XXXXXX";
  const int fd = mkstemp(name.data());
  if (fd < 0) harness_failure("cannot create a temporary file in " + name + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

void expect(bool holds, const char* property) {
  if (holds) return;
  std::fprintf(stderr, "fuzz target: a successful read broke its promise: %s\n", property);
  std::fflush(stderr);
  std::abort();
}

void harness_failure(const std::string& what) {
  std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(99);
}

InputFile::InputFile(const std::uint8_t* data, std::size_t size) {
  fd_ = memfd_create("hpcnn-fuzz-input", MFD_CLOEXEC);
  if (fd_ >= 0) {
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  } else {
    fd_ = temporary_file(unlink_path_);
    path_ = unlink_path_;
  }
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) harness_failure("cannot write the input to " + path_ + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

InputFile::~InputFile() {
  if (!unlink_path_.empty()) unlink(unlink_path_.c_str());
  close(fd_);
}

}  // namespace hpcnn::fuzz
