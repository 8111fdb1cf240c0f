#include "data/file_bytes.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <memory>
#include <sys/stat.h>

#include "base/errors.hpp"
#include "base/file_kind.hpp"

namespace hpcnn::data {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw RuntimeError(path + ": " + problem);
}

std::string mib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// Opens a regular file no larger than max_bytes; its size in `size`. Said as what it is; a FIFO or
// a device is never opened (a FIFO would block, /dev/zero never ends).
File open_regular(const std::string& path, std::size_t max_bytes, std::size_t& size) {
  if (const std::string kind = not_a_regular_file(path); !kind.empty()) fail(path, kind);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(path, std::strerror(errno));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    fail(path, "file of " + std::to_string(st.st_size) + " bytes is larger than the limit of " +
                   std::to_string(max_bytes) + " bytes");
  File f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) fail(path, std::strerror(errno));
  size = static_cast<std::size_t>(st.st_size);
  return f;
}

// The file's compressed bytes, read a block at a time so that they are never all in memory: a
// data set read by every rank of a node holds only its inflated bytes.
class BlockReader {
 public:
  BlockReader(const std::string& path, std::FILE* f) : path_(path), f_(f), block_(1 << 20) {}
  // Unconsumed bytes at the front of the block, refilled from the file when empty (0: the end).
  std::size_t available() {
    if (at_ == filled_) {
      filled_ = std::fread(block_.data(), 1, block_.size(), f_);
      if (filled_ == 0 && std::ferror(f_)) fail(path_, "read error");
      at_ = 0;
    }
    return filled_ - at_;
  }
  std::uint8_t* data() { return block_.data() + at_; }
  void consume(std::size_t n) { at_ += n, consumed_ += n; }
  std::size_t consumed() const { return consumed_; }
  // Whether the next two bytes are a gzip member's magic number (keeps them unconsumed).
  bool at_gzip_magic() {
    if (available() == 0) return false;
    if (filled_ - at_ < 2) {  // the magic straddles two blocks
      std::memmove(block_.data(), block_.data() + at_, filled_ - at_);
      filled_ -= at_, at_ = 0;
      filled_ += std::fread(block_.data() + filled_, 1, block_.size() - filled_, f_);
      if (filled_ < 2) return false;
    }
    return block_[at_] == 0x1f && block_[at_ + 1] == 0x8b;
  }

 private:
  std::string path_;
  std::FILE* f_;
  std::vector<std::uint8_t> block_;
  std::size_t filled_ = 0, at_ = 0, consumed_ = 0;
};

// Inflates every gzip member of the file; the output grows as data arrives (never sized from a
// header), up to max_bytes.
std::vector<std::uint8_t> inflate_gzip(const std::string& path, std::FILE* f, std::size_t file_bytes,
                                       std::size_t max_bytes) {
  std::vector<std::uint8_t> out;
  out.reserve(std::min<std::size_t>(file_bytes * 4, max_bytes));
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) fail(path, "zlib initialization failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  BlockReader in(path, f);
  std::uint8_t chunk[1 << 16];
  for (;;) {
    z.avail_in = static_cast<uInt>(in.available());
    z.next_in = in.data();
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    const uInt before = z.avail_in;
    const int rc = inflate(&z, Z_NO_FLUSH);
    in.consume(before - z.avail_in);
    const std::size_t produced = sizeof chunk - z.avail_out;
    if (out.size() + produced > max_bytes)
      fail(path, "gzip data inflates to more than the limit of " + std::to_string(max_bytes) + " bytes");
    out.insert(out.end(), chunk, chunk + produced);
    if (rc == Z_STREAM_END) {
      if (in.available() == 0) return out;
      if (!in.at_gzip_magic())
        fail(path, std::to_string(file_bytes - in.consumed()) + " trailing bytes after the gzip data");
      inflateReset(&z);  // a further member (concatenated gzip files)
      continue;
    }
    if (rc == Z_BUF_ERROR && in.available() == 0 && produced == 0)
      fail(path, "truncated gzip data (the file ends inside the compressed stream)");
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      fail(path, std::string("corrupt gzip data (") + (z.msg ? z.msg : "zlib error " + std::to_string(rc)) + ")");
  }
}

}  // namespace

bool file_exists(const std::string& path) {
  const std::string kind = not_a_regular_file(path);
  if (kind.empty()) return true;
  if (kind == "no such file") return false;
  fail(path, kind);
}

void check_memory(const std::string& path, std::size_t need_bytes, std::size_t limit_bytes, const std::string& what) {
  if (limit_bytes == kNoMemoryLimit || need_bytes <= limit_bytes) return;
  fail(path, "decoding needs " + mib(need_bytes) + " (" + what + "), more than the " + mib(limit_bytes) +
                 " of memory available");
}

std::vector<std::uint8_t> read_file_bytes(const std::string& path, std::size_t max_bytes) {
  std::size_t size = 0;
  const File f = open_regular(path, max_bytes, size);
  std::uint8_t magic[2] = {0, 0};
  const std::size_t head = std::fread(magic, 1, 2, f.get());
  if (head == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    std::rewind(f.get());
    return inflate_gzip(path, f.get(), size, max_bytes);
  }
  std::vector<std::uint8_t> bytes(size);
  std::copy(magic, magic + std::min(head, size), bytes.begin());
  if (size > head && std::fread(bytes.data() + head, 1, size - head, f.get()) != size - head) fail(path, "read error");
  return bytes;
}

}  // namespace hpcnn::data
