#include "data/sample_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/errors.hpp"
#include "data/scratch_copy.hpp"

namespace hpcnn::data {

namespace {

std::uint64_t file_size(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

std::int64_t modified_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Complete samples in a file of `size` bytes whose sample k sits at offset + k * stride.
std::size_t samples_in(std::uint64_t size, std::uint64_t offset, std::uint64_t stride, std::size_t image_bytes) {
  if (size < offset + image_bytes) return 0;
  return static_cast<std::size_t>((size - offset - image_bytes) / stride + 1);
}

// The files samples are read from: an idx set's image file (labels stay in memory), every
// CIFAR training file.
std::vector<std::string> sample_paths(const DataSet& set) {
  if (set.format == "idx") return {set.train_files.at(0)};
  return set.train_files;
}

}  // namespace

void SampleFiles::check_scratch_space(const DataSet& located, int copies, const std::string& scratch) {
  std::uint64_t need = 0;
  std::size_t files = 0;
  for (const std::string& path : sample_paths(located))
    if (const std::uint64_t bytes = gzip_inflated_size(path); bytes > 0) {
      need += bytes;
      ++files;
    }
  if (files == 0) return;
  data::check_scratch_space(scratch_dir(scratch), need * static_cast<std::uint64_t>(copies),
                            "decompressed copies of " + std::to_string(files) + " gzip training file(s) for " +
                                std::to_string(copies) + " worker(s) on this node");
}

namespace {

// RuntimeError when the file open at `fd` keeps more than kColdResidentLimit of its pages in
// memory after they were dropped; `what` names it. Returns what stayed.
Residency expect_droppable(int fd, const std::string& what) {
  drop_from_page_cache(fd, what);
  const Residency left = page_cache_residency(fd, what);
  if (left.fraction() <= kColdResidentLimit) return left;
  char share[32];
  std::snprintf(share, sizeof share, "%.0f%%", 100 * left.fraction());
  throw RuntimeError(what + ": " + share + " of it stayed in the page cache after its pages were dropped (" +
                     file_system_name(fd) + " keeps them): its reads could not be cold");
}

}  // namespace

void SampleFiles::check_cold_storage(const DataSet& located, const std::string& scratch) {
  for (const std::string& path : sample_paths(located)) {
    if (is_gzip_file(path)) {
      // The samples come from a decompressed copy: probe the folder the copies go to.
      const std::string dir = scratch_dir(scratch);
      const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
      if (fd < 0) throw RuntimeError(dir + ": cannot create a file to probe its page cache: " + std::strerror(errno));
      const std::vector<char> probe(1 << 16, 1);
      const bool written = ::write(fd, probe.data(), probe.size()) == static_cast<ssize_t>(probe.size());
      try {
        if (!written) throw RuntimeError(dir + ": cannot write a probe file: " + std::strerror(errno));
        expect_droppable(fd, "the copies of " + path + " in " + dir);
      } catch (...) {
        ::close(fd);
        throw;
      }
      ::close(fd);
      continue;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw RuntimeError(path + ": " + std::strerror(errno));
    try {
      expect_droppable(fd, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
}

int SampleFiles::open_samples(const std::string& path) {
  if (!is_gzip_file(path)) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw RuntimeError(path + ": " + std::strerror(errno));
    return fd;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string dir = scratch_dir(scratch_);
  data::check_scratch_space(dir, gzip_inflated_size(path), "a decompressed copy of " + path);
  const int fd = decompressed_copy(path, dir);
  decompress_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++decompressed_files_;
  decompressed_bytes_ += file_size(fd);
  return fd;
}

void SampleFiles::open_part(const std::string& path, std::size_t wanted, std::uint64_t offset, std::uint64_t stride) {
  Part p;
  p.path = path;
  const std::size_t copies = decompressed_files_;
  p.fd = open_samples(path);
  p.copy = decompressed_files_ > copies;
  parts_.push_back(p);  // closed by the destructor from here on
  Part& part = parts_.back();
  part.first = samples_;
  struct stat st {};
  if (fstat(part.fd, &st) != 0) throw RuntimeError(path + ": " + std::strerror(errno));
  part.size = static_cast<std::uint64_t>(st.st_size);
  part.mtime_ns = modified_ns(st);
  part.count = std::min(wanted, samples_in(part.size, offset, stride, image_bytes_));
  part.offset = offset;
  part.stride = stride;
  samples_ += part.count;
}

SampleFiles::SampleFiles(const DataSet& set, const std::string& scratch)
    : scratch_(scratch), image_bytes_(set.train.image_bytes()) {
  const std::size_t n = set.train.size();
  try {
    if (set.format == "idx") {
      // A 16-byte header, then the images back to back.
      open_part(sample_paths(set).front(), n, 16, image_bytes_);
    } else if (set.format == "cifar10-bin" || set.format == "cifar100-bin") {
      const std::uint64_t labels = set.format == "cifar10-bin" ? 1 : 2, record = labels + image_bytes_;
      for (const std::string& path : sample_paths(set)) {
        if (samples_ >= n) break;  // --train-limit: the later files are not needed
        open_part(path, n - samples_, labels, record);
      }
    } else {
      throw RuntimeError(set.dir + ": no per-sample reader for format '" + set.format + "'");
    }
    if (samples_ < n)
      throw RuntimeError(set.train_files.front() + ": the files now hold " + std::to_string(samples_) +
                         " training samples, " + std::to_string(n) + " were loaded");
  } catch (...) {
    for (Part& p : parts_) ::close(p.fd);
    throw;
  }
}

SampleFiles::~SampleFiles() {
  for (Part& p : parts_) ::close(p.fd);
}

Residency SampleFiles::residency() const {
  Residency all;
  for (const Part& p : parts_) all += page_cache_residency(p.fd, p.path);
  return all;
}

Residency SampleFiles::drop_pages() const {
  Residency all;
  for (const Part& p : parts_) {
    all += expect_droppable(p.fd, p.copy ? "the decompressed copy of " + p.path + " in " + scratch_dir(scratch_) : p.path);
  }
  return all;
}

void SampleFiles::read(std::size_t index, std::uint8_t* pixels) const {
  for (const Part& p : parts_) {
    if (index < p.first || index >= p.first + p.count) continue;
    const std::uint64_t at = p.offset + (index - p.first) * p.stride;
    std::size_t done = 0;
    while (done < image_bytes_) {
      const ssize_t got = pread(p.fd, pixels + done, image_bytes_ - done, static_cast<off_t>(at + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0)
        throw StorageError(p.path + ": reading sample " + std::to_string(index - p.first) + " at byte " +
                           std::to_string(at) + " failed: " + std::strerror(errno));
      if (got == 0)
        throw StorageError(p.path + ": sample " + std::to_string(index - p.first) + " at byte " + std::to_string(at) +
                           " is past the end: the file has " + std::to_string(file_size(p.fd)) + " bytes, " +
                           std::to_string(p.size) + " when it was opened");
      done += static_cast<std::size_t>(got);
    }
    reads_.fetch_add(1);
    bytes_.fetch_add(image_bytes_);
    return;
  }
  throw RuntimeError("training sample " + std::to_string(index) + " is not in the files (" + std::to_string(samples_) +
                     " samples)");
}

void SampleFiles::check_unchanged() const {
  for (const Part& p : parts_) {
    if (p.copy) continue;
    struct stat st {};
    if (fstat(p.fd, &st) != 0) throw StorageError(p.path + ": cannot be asked for its size: " + std::strerror(errno));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size != p.size)
      throw StorageError(p.path + ": changed size during the run: " + std::to_string(p.size) + " bytes when opened, " +
                         std::to_string(size) + " now");
    if (modified_ns(st) != p.mtime_ns) throw StorageError(p.path + ": rewritten during the run (its modification time changed)");
  }
}

}  // namespace hpcnn::data
