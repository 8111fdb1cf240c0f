#include "data/file_bytes.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
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

std::vector<std::uint8_t> read_raw(const std::string& path, std::size_t max_bytes) {
  // Said as what it is; a FIFO or a device is never opened (a FIFO would block, /dev/zero never
  // ends).
  if (const std::string kind = not_a_regular_file(path); !kind.empty()) fail(path, kind);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(path, std::strerror(errno));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    fail(path, "file of " + std::to_string(st.st_size) + " bytes is larger than the limit of " +
                   std::to_string(max_bytes) + " bytes");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) fail(path, std::strerror(errno));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
  if (!bytes.empty() && std::fread(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    fail(path, "read error");
  return bytes;
}

bool is_gzip(const std::vector<std::uint8_t>& b, std::size_t at) {
  return b.size() >= at + 2 && b[at] == 0x1f && b[at + 1] == 0x8b;
}

// Inflates every gzip member of `in`; the output grows as data arrives (never sized from a
// header), up to max_bytes.
std::vector<std::uint8_t> inflate_gzip(const std::string& path, const std::vector<std::uint8_t>& in,
                                       std::size_t max_bytes) {
  std::vector<std::uint8_t> out;
  out.reserve(std::min<std::size_t>(in.size() * 4, max_bytes));
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) fail(path, "zlib initialization failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  z.next_in = const_cast<Bytef*>(in.data());
  std::size_t consumed = 0;
  std::uint8_t chunk[1 << 16];
  for (;;) {
    z.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size() - consumed, 1u << 30));
    z.next_in = const_cast<Bytef*>(in.data() + consumed);
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    const uInt before = z.avail_in;
    const int rc = inflate(&z, Z_NO_FLUSH);
    consumed += before - z.avail_in;
    const std::size_t produced = sizeof chunk - z.avail_out;
    if (out.size() + produced > max_bytes)
      fail(path, "gzip data inflates to more than the limit of " + std::to_string(max_bytes) + " bytes");
    out.insert(out.end(), chunk, chunk + produced);
    if (rc == Z_STREAM_END) {
      if (consumed == in.size()) return out;
      if (!is_gzip(in, consumed))
        fail(path, std::to_string(in.size() - consumed) + " trailing bytes after the gzip data");
      inflateReset(&z);  // a further member (concatenated gzip files)
      continue;
    }
    if (rc == Z_BUF_ERROR && consumed == in.size() && produced == 0)
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
  std::vector<std::uint8_t> raw = read_raw(path, max_bytes);
  if (!is_gzip(raw, 0)) return raw;
  return inflate_gzip(path, raw, max_bytes);
}

}  // namespace hpcnn::data
