#include "data/sample_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.hpp"

namespace hpcnn::data {

namespace {

bool is_gzip(int fd) {
  unsigned char magic[2] = {0, 0};
  return pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

std::uint64_t file_size(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

UsageError gzip_error(const std::string& path) {
  return UsageError(path + ": gzip-compressed; reading every batch from the files needs them uncompressed "
                           "(gunzip them) or --cache");
}

}  // namespace

void SampleFiles::require_uncompressed(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const bool gz = is_gzip(fd);
    ::close(fd);
    if (gz) throw gzip_error(path);
  }
}

void SampleFiles::open_part(const std::string& path, std::size_t count, std::uint64_t offset, std::uint64_t stride) {
  Part p;
  p.path = path;
  p.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (p.fd < 0) throw RuntimeError(path + ": " + std::strerror(errno));
  parts_.push_back(p);  // closed by the destructor from here on
  if (is_gzip(p.fd)) throw gzip_error(path);
  parts_.back().first = samples_;
  parts_.back().count = count;
  parts_.back().offset = offset;
  parts_.back().stride = stride;
  samples_ += count;
}

SampleFiles::SampleFiles(const DataSet& set) : image_bytes_(set.train.image_bytes()) {
  const std::size_t n = set.train.size();
  try {
    if (set.format == "idx") {
      // train_files = {images, labels}: a 16-byte header, then the images back to back.
      open_part(set.train_files.at(0), n, 16, image_bytes_);
    } else if (set.format == "cifar10-bin" || set.format == "cifar100-bin") {
      const std::uint64_t labels = set.format == "cifar10-bin" ? 1 : 2, record = labels + image_bytes_;
      for (const std::string& path : set.train_files) {
        if (samples_ >= n) break;  // --train-limit: the later files are not needed
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        const std::uint64_t bytes = fd >= 0 ? file_size(fd) : 0;
        if (fd >= 0) ::close(fd);
        const std::size_t in_file = std::min<std::size_t>(static_cast<std::size_t>(bytes / record), n - samples_);
        open_part(path, in_file, labels, record);
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

void SampleFiles::read(std::size_t index, std::uint8_t* pixels) const {
  for (const Part& p : parts_) {
    if (index < p.first || index >= p.first + p.count) continue;
    const std::uint64_t at = p.offset + (index - p.first) * p.stride;
    std::size_t done = 0;
    while (done < image_bytes_) {
      const ssize_t got = pread(p.fd, pixels + done, image_bytes_ - done, static_cast<off_t>(at + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0)
        throw RuntimeError(p.path + ": short read of sample " + std::to_string(index - p.first) + " at byte " +
                           std::to_string(at) + (got < 0 ? std::string(": ") + std::strerror(errno) : " (file shrank?)"));
      done += static_cast<std::size_t>(got);
    }
    reads_.fetch_add(1);
    bytes_.fetch_add(image_bytes_);
    return;
  }
  throw RuntimeError("training sample " + std::to_string(index) + " is not in the files (" + std::to_string(samples_) +
                     " samples)");
}

}  // namespace hpcnn::data
