#include "harness/checkpoint.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/crc32.hpp"
#include "base/durable_file.hpp"
#include "base/errors.hpp"
#include "results/result_file.hpp"

namespace hpcnn {

namespace {

constexpr char kMagic[] = "hpcnn-checkpoint 1\n";

std::uint32_t crc32(const std::string& bytes) {
  Crc32 crc;
  crc.add(bytes.data(), bytes.size());
  return crc.value();
}

// Appends raw bytes; the reader below takes them back in the same order.
struct Out {
  std::string bytes;
  void u64(std::uint64_t v) { bytes.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes += s;
  }
  void raw(const void* p, std::size_t n) { bytes.append(static_cast<const char*>(p), n); }
};

struct In {
  const std::string& bytes;
  const std::string& path;
  std::size_t at = 0;
  // (n > size - at, not at + n > size: a hostile length near 2^64 would wrap the sum and pass)
  void need(std::uint64_t n) const {
    if (n > bytes.size() - at) throw RuntimeError(path + ": damaged checkpoint (ends early)");
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v;
    std::memcpy(&v, bytes.data() + at, 8);
    at += 8;
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    need(n);
    std::string s = bytes.substr(at, n);
    at += n;
    return s;
  }
  template <class T>
  std::vector<T> array() {
    const std::uint64_t n = u64();
    if (n > (bytes.size() - at) / sizeof(T)) throw RuntimeError(path + ": damaged checkpoint (array too long)");
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), bytes.data() + at, n * sizeof(T));  // (an empty vector's data() may be null)
    at += n * sizeof(T);
    return v;
  }
};

template <class Map>
const typename Map::mapped_type& entry(const Map& m, const std::string& name) {
  const auto it = m.find(name);
  if (it == m.end()) throw RuntimeError("checkpoint has no entry '" + name + "'");
  return it->second;
}

}  // namespace

const std::vector<double>& Checkpoint::doubles(const std::string& name) const { return entry(doubles_, name); }
const std::vector<float>& Checkpoint::floats(const std::string& name) const { return entry(floats_, name); }
std::int64_t Checkpoint::integer(const std::string& name) const { return entry(ints_, name); }

void Checkpoint::write(const std::string& path, const std::string& settings) const {
  Out out;
  out.raw(kMagic, sizeof kMagic - 1);
  out.str(settings);
  out.u64(doubles_.size());
  for (const auto& [name, v] : doubles_) {
    out.str(name);
    out.u64(v.size());
    out.raw(v.data(), v.size() * sizeof(double));
  }
  out.u64(floats_.size());
  for (const auto& [name, v] : floats_) {
    out.str(name);
    out.u64(v.size());
    out.raw(v.data(), v.size() * sizeof(float));
  }
  out.u64(ints_.size());
  for (const auto& [name, v] : ints_) {
    out.str(name);
    out.u64(static_cast<std::uint64_t>(v));
  }
  const std::uint32_t crc = crc32(out.bytes);
  out.raw(&crc, sizeof crc);
  // A full disk leaves no partial checkpoint; the previous one is intact.
  write_file_durably(path, out.bytes, "the checkpoint");
}

Checkpoint Checkpoint::parse(const std::string& bytes, const std::string& path, const std::string& settings) {
  const std::size_t magic = sizeof kMagic - 1;
  if (bytes.size() < magic + 4 || bytes.compare(0, magic, kMagic) != 0) throw RuntimeError(path + ": not an hpcnn checkpoint");
  std::uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  const std::string body = bytes.substr(0, bytes.size() - 4);
  if (crc32(body) != stored) throw RuntimeError(path + ": damaged checkpoint (checksum mismatch)");
  In in{body, path, magic};
  const std::string made_with = in.str();
  if (made_with != settings)
    throw UsageError(path + ": a checkpoint of other settings ('" + made_with + "', not '" + settings + "')");
  Checkpoint c;
  for (std::uint64_t n = in.u64(), k = 0; k < n; ++k) {
    std::string name = in.str();
    c.doubles_[name] = in.array<double>();
  }
  for (std::uint64_t n = in.u64(), k = 0; k < n; ++k) {
    std::string name = in.str();
    c.floats_[name] = in.array<float>();
  }
  for (std::uint64_t n = in.u64(), k = 0; k < n; ++k) {
    std::string name = in.str();
    c.ints_[name] = static_cast<std::int64_t>(in.u64());
  }
  return c;
}

}  // namespace hpcnn
