// HDF5 result files (schema in docs/RESULTS.md), through the HDF5 C API only.
//
// Every HDF5 call is checked; a failure becomes RuntimeError("PATH: what failed (HDF5's innermost
// message)"). HDF5's own error printing is switched off. No exception ever crosses an HDF5 frame:
// the only callback (attribute names) just collects names.
#include "results/result_file.hpp"

#include <hdf5.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>

#include "base/crc32.hpp"
#include "base/errors.hpp"
#include "base/fault_injection.hpp"
#include "base/file_kind.hpp"

namespace hpcnn {

namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "hpcnn-result";

// ---------------------------------------------------------------------------------------------
// HDF5 plumbing

void quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

herr_t innermost_error(unsigned, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (out->empty() && err->desc && *err->desc) *out = err->desc;
  return 0;
}

// " (HDF5's innermost message)" for the error just raised, or "" when there is none.
std::string hdf5_reason() {
  std::string desc;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_error, &desc);
  H5Eclear2(H5E_DEFAULT);
  for (char& c : desc)
    if (c == '\n' || c == '\r') c = ' ';
  return desc.empty() ? desc : " (" + desc + ")";
}

// An owned HDF5 identifier, closed with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept {
    std::swap(id_, other.id_);
    std::swap(closer_, other.closer_);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now; returns false when closing failed (matters for files: data is flushed here).
  bool reset() {
    bool ok = true;
    if (id_ >= 0 && closer_) ok = closer_(id_) >= 0;
    id_ = -1;
    return ok;
  }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Error context: the file and the object inside it, e.g. "run.h5: /points/000003".
class Where {
 public:
  explicit Where(std::string file) : file_(std::move(file)) {}
  Where at(const std::string& object) const {
    Where w(file_);
    w.object_ = object;
    return w;
  }
  const std::string& file() const { return file_; }
  [[noreturn]] void fail(const std::string& what, bool with_hdf5_reason = true) const {
    std::string msg = file_ + ": ";
    if (!object_.empty()) msg += object_ + ": ";
    msg += what;
    if (with_hdf5_reason) msg += hdf5_reason();
    throw RuntimeError(msg);
  }
  // Any HDF5 return value: identifiers, herr_t, htri_t; negative means failure.
  template <typename T>
  T check(T status, const std::string& what) const {
    if (status < 0) fail(what);
    return status;
  }
  const std::string& object() const { return object_; }

 private:
  std::string file_, object_;
};

Handle vlen_string_type(H5T_cset_t cset = H5T_CSET_UTF8) {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  if (t.valid() && H5Tset_size(t.get(), H5T_VARIABLE) >= 0 && H5Tset_cset(t.get(), cset) >= 0)
    return t;
  return Handle();
}

// Strings are stored as UTF-8; bytes that are not valid UTF-8 (a Latin-1 command line, say) become
// U+FFFD so that every reader can decode the file.
std::string valid_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = len > 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) ok = (p[i + k] & 0xc0) == 0x80;
    if (ok && len > 1) {  // reject overlong forms, surrogates and code points above U+10FFFF
      unsigned cp = c & (0x7f >> len);
      for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3f);
      static const unsigned min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= min_cp[len] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Checksum block
//
// HDF5 does not checksum everything it parses (variable-length strings live in unchecked global
// heaps), and a damaged file can crash or hang the library. So the writer reserves an HDF5 user
// block (kUserBlock bytes at the start, which HDF5 skips) and, once the file is closed, fills it
// with a text header holding the file size and the CRC-32 of every byte after the block:
//   hpcnn-result\nchecksum-block 1\nsize <bytes>\ncrc32 <8 hex digits>\n  (then NUL bytes)
// The reader verifies both before HDF5 sees the file, and requires them: a file without the header
// (damaged in its first bytes, foreign, or rewritten by another tool) is never handed to HDF5.
// HDF5 is not safe on untrusted files, so hpcnn-summary also parses in a child process
// (isolated_read.hpp).

constexpr std::size_t kUserBlock = 512;
constexpr const char* kBlockMagic = "hpcnn-result\n";

// Size and CRC-32 of the bytes after the user block.
std::pair<std::uint64_t, std::uint32_t> file_checksum(std::FILE* f, const std::string& path) {
  Crc32 crc;
  std::uint64_t size = 0;
  std::vector<char> buf(1 << 20);
  if (std::fseek(f, static_cast<long>(kUserBlock), SEEK_SET) != 0)
    throw RuntimeError(path + ": cannot seek: " + std::strerror(errno));
  size = kUserBlock;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), f)) {
    crc.add(buf.data(), n);
    size += n;
  }
  if (std::ferror(f)) throw RuntimeError(path + ": cannot read: " + std::strerror(errno));
  return {size, crc.value()};
}

// The checksum block of a file whose bytes after the block are `body`.
std::string checksum_block(const std::vector<char>& body) {
  Crc32 crc;
  crc.add(body.data(), body.size());
  char block[kUserBlock] = {};
  std::snprintf(block, sizeof block, "%schecksum-block 1\nsize %llu\ncrc32 %08x\n", kBlockMagic,
                static_cast<unsigned long long>(kUserBlock + body.size()), static_cast<unsigned>(crc.value()));
  return std::string(block, sizeof block);
}

// Writes all of `bytes` to fd; throws RuntimeError naming the path (a full disk: "No space left on
// device").
void write_fully(int fd, const char* bytes, std::size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t done = ::write(fd, bytes, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) throw RuntimeError(path + ": cannot write the result file: " + std::strerror(done < 0 ? errno : ENOSPC));
    bytes += done;
    n -= static_cast<std::size_t>(done);
  }
}

}  // namespace

// fsync of a file or a directory (its entries: a rename is durable once its directory is).
void sync_path(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw RuntimeError(path + ": cannot open to sync: " + std::strerror(errno));
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  if (rc != 0 && err != EINVAL) throw RuntimeError(path + ": cannot sync to disk: " + std::strerror(err));
}

namespace {

// Throws unless the file starts with a checksum block that matches every byte after it.
void verify_checksum_block(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw RuntimeError(path + ": cannot open: " + std::strerror(errno));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  char block[kUserBlock + 1] = {};
  std::size_t got = std::fread(block, 1, kUserBlock, f);
  const std::size_t magic_len = std::strlen(kBlockMagic);
  if (got < magic_len || std::memcmp(block, kBlockMagic, magic_len) != 0)
    throw RuntimeError(path + ": not an hpcnn result file, or its header is damaged (no '" +
                       std::string(kBlockMagic, magic_len - 1) + "' checksum block in its first bytes)");
  unsigned version = 0;
  unsigned long long size = 0;
  unsigned crc = 0;
  if (std::sscanf(block + magic_len, "checksum-block %u\nsize %llu\ncrc32 %8x\n", &version, &size, &crc) != 3)
    throw RuntimeError(path + ": corrupted file (unreadable checksum block)");
  if (version != 1) throw RuntimeError(path + ": checksum block version " + std::to_string(version) +
                                       " is not supported (this build reads version 1)");
  if (got < kUserBlock) throw RuntimeError(path + ": truncated file (" + std::to_string(got) + " bytes, expected " +
                                           std::to_string(size) + ")");
  auto [actual_size, actual_crc] = file_checksum(f, path);
  if (actual_size != size)
    throw RuntimeError(path + ": " + (actual_size < size ? "truncated" : "corrupted") + " file (" +
                       std::to_string(actual_size) + " bytes, expected " + std::to_string(size) + ")");
  if (actual_crc != crc)
    throw RuntimeError(path + ": corrupted file (CRC-32 mismatch: the file changed after it was written)");
}

// ---------------------------------------------------------------------------------------------
// Writing

Handle tracked_group_plist(const Where& where) {
  Handle plist(where.check(H5Pcreate(H5P_GROUP_CREATE), "cannot create a property list"), H5Pclose);
  where.check(H5Pset_attr_creation_order(plist.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
              "cannot set attribute creation order");
  return plist;
}

// A group whose attributes keep their creation order (so settings read back in option order).
Handle create_group(hid_t parent, const std::string& name, const Where& where) {
  Handle plist = tracked_group_plist(where);
  return Handle(where.check(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, plist.get(), H5P_DEFAULT),
                            "cannot create group '" + name + "'"),
                H5Gclose);
}

void write_attribute(hid_t obj, const std::string& name, hid_t file_type, hid_t mem_type,
                     const void* buf, const Where& where) {
  const std::string what = "attribute '" + name + "'";
  Handle space(where.check(H5Screate(H5S_SCALAR), "cannot create a dataspace"), H5Sclose);
  Handle attr(where.check(H5Acreate2(obj, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                          "cannot create " + what),
              H5Aclose);
  where.check(H5Awrite(attr.get(), mem_type, buf), "cannot write " + what);
}

void write_string_attribute(hid_t obj, const std::string& name, const std::string& value,
                            const Where& where) {
  Handle type = vlen_string_type();
  if (!type.valid()) where.fail("cannot create a string type");
  std::string utf8 = valid_utf8(value);
  const char* ptr = utf8.c_str();
  write_attribute(obj, name, type.get(), type.get(), &ptr, where);
}

void write_value(hid_t obj, const std::string& name, const Value& value, const Where& where) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) {
    write_attribute(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, i, where);
  } else if (const auto* d = std::get_if<double>(&value)) {
    write_attribute(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, d, where);
  } else {
    write_string_attribute(obj, name, std::get<std::string>(value), where);
  }
}

void write_int32_attribute(hid_t obj, const std::string& name, int value, const Where& where) {
  write_attribute(obj, name, H5T_STD_I32LE, H5T_NATIVE_INT, &value, where);
}

// Programming errors in an Array, caught before anything is written.
void check_array(const Array& array) {
  if (array.name.empty() || array.name == "." || array.name.find('/') != std::string::npos)
    throw std::logic_error("ResultWriter: invalid array name '" + array.name + "'");
  std::size_t count = 1;
  for (std::size_t d : array.dims) count *= d;
  if (count != array.data.size())
    throw std::logic_error("ResultWriter: array '" + array.name + "' has " +
                           std::to_string(array.data.size()) + " values, its dims hold " +
                           std::to_string(count));
}

void write_array(hid_t group, const Array& array, const Where& where) {
  const std::size_t count = array.data.size();
  const std::string what = "dataset '" + array.name + "'";
  std::vector<hsize_t> dims(array.dims.begin(), array.dims.end());
  Handle space(where.check(dims.empty() ? H5Screate(H5S_SCALAR)
                                        : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                           "cannot create the dataspace of " + what),
               H5Sclose);
  Handle set(where.check(H5Dcreate2(group, array.name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT),
                         "cannot create " + what),
             H5Dclose);
  if (count > 0)
    where.check(H5Dwrite(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, array.data.data()),
                "cannot write " + what);
  write_string_attribute(set.get(), "unit", array.unit, where.at(where.object() + "/" + array.name));
}

void write_string_dataset(hid_t group, const std::string& name, const std::vector<std::string>& values,
                          const Where& where) {
  const std::string what = "dataset '" + name + "'";
  std::vector<std::string> utf8;
  std::vector<const char*> ptrs;
  utf8.reserve(values.size());
  for (const auto& v : values) utf8.push_back(valid_utf8(v));
  for (const auto& v : utf8) ptrs.push_back(v.c_str());
  Handle type = vlen_string_type();
  if (!type.valid()) where.fail("cannot create a string type");
  hsize_t dim = values.size();
  Handle space(where.check(H5Screate_simple(1, &dim, nullptr), "cannot create the dataspace of " + what),
               H5Sclose);
  Handle set(where.check(H5Dcreate2(group, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT),
                         "cannot create " + what),
             H5Dclose);
  if (!ptrs.empty())
    where.check(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()),
                "cannot write " + what);
}

// The scalar string members of Provenance, in the order they are written (one table for the writer
// and the reader).
struct ProvenanceString {
  const char* name;
  std::string Provenance::*member;
};
const ProvenanceString kProvenanceStrings[] = {
    {"suite", &Provenance::suite},
    {"command_line", &Provenance::command_line},
    {"reproducer", &Provenance::reproducer},
    {"hpcnn_version", &Provenance::hpcnn_version},
    {"configure_options", &Provenance::configure_options},
    {"start_time", &Provenance::start_time},
    {"end_time", &Provenance::end_time},
    {"job_id", &Provenance::job_id},
};

std::string utc_stamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// Suite names become file names: keep [A-Za-z0-9._-], replace the rest.
std::string file_name_part(const std::string& suite) {
  std::string out = suite.empty() ? std::string("hpcnn") : suite;
  for (char& c : out) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                c == '_' || c == '.';
    if (!keep) c = '_';
  }
  if (out[0] == '.') out[0] = '_';
  return out;
}

bool path_exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// No file locking: result files are written by one process under a unique temporary name, and
// locking fails on some parallel and network file systems.
Handle file_access_plist(const Where& where) {
  Handle fapl(where.check(H5Pcreate(H5P_FILE_ACCESS), "cannot create a property list"), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(fapl.get(), false, true);
#endif
  where.check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "cannot set the close degree");
  return fapl;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ResultWriter

// The file is built in memory (HDF5's core driver, no backing store) and written to the temporary
// file in one piece at commit: nothing is on disk while the run goes on, so a run killed at any
// moment (SIGKILL, the OOM killer, a watchdog's abort) leaves no partial file, and a full disk or
// a failing file system is one error of ours at the commit (HDF5 that fails to write while
// closing a file leaves its state broken and crashes at exit); the temporary file is then removed
// whole. Durability of the points before the commit is the journal's job (journal.hpp).
struct ResultWriter::Impl {
  Handle file, points;
  std::size_t next_point = 0;
  ~Impl() {
    points.reset();
    file.reset();
  }
};

namespace {

// The result directory, created when missing; throws RuntimeError naming it when unusable.
void prepare_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeError(dir + ": cannot create the result directory: " + ec.message());
  if (!fs::is_directory(dir, ec)) throw RuntimeError(dir + ": not a directory");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw RuntimeError(dir + ": result directory is not writable: " + std::strerror(errno));
}

}  // namespace

ResultWriter::ResultWriter(const std::string& dir, const std::string& suite) : dir_(dir.empty() ? "." : dir) {
  quiet_hdf5();
  prepare_directory(dir_);
  // .<suite>-<stamp>-<pid>.h5.tmp; when a writer of this process already took that name in the
  // same second, .<suite>-<stamp>-<pid>-1.h5.tmp and so on.
  const std::string base = file_name_part(suite) + "-" + utc_stamp() + "-" + std::to_string(getpid());
  // The temporary file exists only during a commit, so this process remembers the names it took.
  static std::set<std::string> taken;
  std::string stem = base;
  for (int n = 1; taken.count(join(dir_, stem)) || path_exists(join(dir_, "." + stem + ".h5.tmp")) ||
                  path_exists(join(dir_, stem + ".h5"));
       ++n)
    stem = base + "-" + std::to_string(n);
  taken.insert(join(dir_, stem));
  temp_path_ = join(dir_, "." + stem + ".h5.tmp");
  final_path_ = join(dir_, stem + ".h5");
  probe();
  create();
}

ResultWriter::ResultWriter(const std::string& dir, const Named& name)
    : dir_(dir.empty() ? "." : dir), replace_(name.replace) {
  quiet_hdf5();
  prepare_directory(dir_);
  temp_path_ = join(dir_, "." + name.stem + ".h5.tmp");
  final_path_ = join(dir_, name.stem + ".h5");
  std::remove(temp_path_.c_str());  // left by a run of the same name killed during its commit
  probe();
  create();
}

// Creates and removes the temporary file: an unwritable directory fails now, before any work.
void ResultWriter::probe() {
  const int fd = open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw RuntimeError(temp_path_ + ": cannot create the result file: " + std::strerror(errno));
  close(fd);
  std::remove(temp_path_.c_str());
}

void ResultWriter::create() {
  Where where(temp_path_);
  auto impl = std::make_unique<Impl>();
  try {
    Handle fapl = file_access_plist(where);
    where.check(H5Pset_fapl_core(fapl.get(), std::size_t{1} << 16, false), "cannot select the in-memory driver");
    Handle fcpl(where.check(H5Pcreate(H5P_FILE_CREATE), "cannot create a property list"), H5Pclose);
    // The image HDF5 gives at commit leaves this block out; its superblock records it, so the
    // file on disk is the block followed by the image.
    where.check(H5Pset_userblock(fcpl.get(), kUserBlock), "cannot reserve the checksum block");
    impl->file = Handle(H5Fcreate(temp_path_.c_str(), H5F_ACC_EXCL, fcpl.get(), fapl.get()), H5Fclose);
    if (!impl->file.valid()) where.fail("cannot create the result file");
  } catch (...) {
    impl.reset();
    throw;
  }
  try {
    write_string_attribute(impl->file.get(), "format", kFormat, where);
    write_int32_attribute(impl->file.get(), "schema_version", kSchemaVersion, where);
    impl->points = Handle(where.check(H5Gcreate2(impl->file.get(), "points", H5P_DEFAULT, H5P_DEFAULT,
                                                 H5P_DEFAULT),
                                      "cannot create group 'points'"),
                          H5Gclose);
  } catch (...) {
    impl.reset();
    throw;
  }
  impl_ = impl.release();
}

ResultWriter::~ResultWriter() {
  if (impl_) {
    delete impl_;  // closes the file
    impl_ = nullptr;
  }
  if (!committed_ && !temp_path_.empty()) std::remove(temp_path_.c_str());
}

void ResultWriter::add_point(const ResultPoint& point) {
  if (committed_ || !impl_) throw std::logic_error("ResultWriter::add_point after commit");
  // A bad array fails now, not at the commit.
  for (std::size_t i = 0; i < point.arrays.size(); ++i) {
    check_array(point.arrays[i]);
    for (std::size_t j = 0; j < i; ++j)
      if (point.arrays[j].name == point.arrays[i].name)
        throw std::logic_error("ResultWriter: array '" + point.arrays[i].name + "' twice in one point");
  }
  char name[32];
  std::snprintf(name, sizeof name, "%06zu", impl_->next_point);
  const Where where = Where(temp_path_).at(std::string("/points/") + name);
  try {
    Handle group = create_group(impl_->points.get(), name, where);
    for (const auto& [field, value] : point.record.items()) write_value(group.get(), field, value, where);
    for (const Array& array : point.arrays) write_array(group.get(), array, where);
  } catch (...) {
    // Leave no half-written point behind (a caller may catch, go on and add the next point).
    if (H5Lexists(impl_->points.get(), name, H5P_DEFAULT) > 0) H5Ldelete(impl_->points.get(), name, H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    throw;
  }
  ++impl_->next_point;
}

std::string ResultWriter::commit(const Provenance& provenance) {
  if (committed_ || !impl_) throw std::logic_error("ResultWriter::commit called twice");
  const Where where = Where(temp_path_).at("/provenance");
  {
    Handle group = create_group(impl_->file.get(), "provenance", where);
    for (const auto& s : kProvenanceStrings) write_string_attribute(group.get(), s.name, provenance.*s.member, where);
    write_int32_attribute(group.get(), "mpi_size", provenance.mpi_size, where);
    write_string_attribute(group.get(), "run_starts", provenance.run_starts, where);
    write_int32_attribute(group.get(), "restarts", provenance.restarts, where);
    write_string_dataset(group.get(), "hosts", provenance.hosts, where);
    const std::pair<const char*, const std::vector<std::pair<std::string, std::string>>*> maps[] = {
        {"libraries", &provenance.libraries}, {"settings", &provenance.settings}};
    for (const auto& [name, entries] : maps) {
      const Where sub = where.at(std::string("/provenance/") + name);
      Handle g = create_group(group.get(), name, sub);
      for (const auto& [key, value] : *entries) write_string_attribute(g.get(), key, value, sub);
    }
  }
  impl_->points.reset();
  const Where file_where(temp_path_);
  file_where.check(H5Fflush(impl_->file.get(), H5F_SCOPE_GLOBAL), "cannot flush the file");
  const ssize_t image_size = file_where.check(H5Fget_file_image(impl_->file.get(), nullptr, 0), "cannot size the file image");
  std::vector<char> image(static_cast<std::size_t>(image_size));
  file_where.check(H5Fget_file_image(impl_->file.get(), image.data(), image.size()), "cannot copy the file image");
  if (!impl_->file.reset()) file_where.fail("cannot close the file");
  delete impl_;
  impl_ = nullptr;
  write_file_image(checksum_block(image), image);
  if (replace_) {
    if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0)
      throw RuntimeError(temp_path_ + ": cannot rename to " + final_path_ + ": " + std::strerror(errno));
    sync_path(dir_);
    committed_ = true;
    return final_path_;
  }
  // Never overwrite: link() fails atomically when the name exists; take the next suffix then.
  const std::string stem = final_path_.substr(0, final_path_.size() - 3);  // without ".h5"
  for (int n = 0;; ++n) {
    std::string target = n == 0 ? final_path_ : stem + "-" + std::to_string(n) + ".h5";
    if (link(temp_path_.c_str(), target.c_str()) == 0) {
      unlink(temp_path_.c_str());
      final_path_ = target;
      break;
    }
    if (errno == EEXIST) continue;
    // File systems without hard links: rename, which is atomic but would replace an existing file.
    if (path_exists(target)) continue;
    if (std::rename(temp_path_.c_str(), target.c_str()) != 0)
      throw RuntimeError(temp_path_ + ": cannot rename to " + target + ": " + std::strerror(errno));
    final_path_ = target;
    break;
  }
  sync_path(dir_);
  committed_ = true;
  return final_path_;
}

// The temporary file, created now (O_EXCL) and written whole: the checksum block, then the image.
// Throws RuntimeError naming it (a full disk: "No space left on device"); the destructor then
// removes what was written.
void ResultWriter::write_file_image(const std::string& block, const std::vector<char>& image) {
  const int fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw RuntimeError(temp_path_ + ": cannot create the result file: " + std::strerror(errno));
  try {
    write_fully(fd, block.data(), block.size(), temp_path_);
    static long commits = 0;  // test-only: a rank killed while it writes the file
    inject_fault("commit", ++commits);
    write_fully(fd, image.data(), image.size(), temp_path_);
    if (::fsync(fd) != 0 && errno != EINVAL)
      throw RuntimeError(temp_path_ + ": cannot sync to disk: " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw RuntimeError(temp_path_ + ": cannot write the result file: " + std::strerror(errno));
}

// ---------------------------------------------------------------------------------------------
// Reading

namespace {

herr_t collect_attribute_name(hid_t, const char* name, const H5A_info_t*, void* data) {
  try {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  } catch (...) {
    return -1;
  }
}

// Attribute names of an object, in creation order when the file tracks it, else by name.
std::vector<std::string> attribute_names(hid_t obj, const Where& where) {
  H5_index_t index = H5_INDEX_NAME;
  if (H5Iget_type(obj) == H5I_GROUP) {
    Handle plist(H5Gget_create_plist(obj), H5Pclose);
    unsigned flags = 0;
    if (plist.valid() && H5Pget_attr_creation_order(plist.get(), &flags) >= 0 &&
        (flags & H5P_CRT_ORDER_INDEXED))
      index = H5_INDEX_CRT_ORDER;
  }
  std::vector<std::string> names;
  hsize_t idx = 0;
  where.check(H5Aiterate2(obj, index, H5_ITER_INC, &idx, collect_attribute_name, &names),
              "cannot list the attributes");
  return names;
}

// Names of a group's links, by name.
std::vector<std::string> link_names(hid_t group, const Where& where) {
  H5G_info_t info;
  where.check(H5Gget_info(group, &info), "cannot read the group");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len < 0) where.fail("cannot read the name of link " + std::to_string(i));
    std::string name(static_cast<std::size_t>(len) + 1, '\0');
    if (H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT) < 0)
      where.fail("cannot read the name of link " + std::to_string(i));
    name.resize(static_cast<std::size_t>(len));
    names.push_back(std::move(name));
  }
  return names;
}

bool has_attribute(hid_t obj, const std::string& name, const Where& where) {
  htri_t exists = H5Aexists(obj, name.c_str());
  if (exists < 0) where.fail("cannot look up attribute '" + name + "'");
  return exists > 0;
}

bool has_link(hid_t group, const std::string& name, const Where& where) {
  htri_t exists = H5Lexists(group, name.c_str(), H5P_DEFAULT);
  if (exists < 0) where.fail("cannot look up '" + name + "'");
  return exists > 0;
}

// An attribute opened with its type class and checked to hold exactly one value.
struct OpenAttribute {
  Handle attr, type;
  H5T_class_t cls;
};

OpenAttribute open_scalar_attribute(hid_t obj, const std::string& name, const Where& where) {
  const std::string what = "attribute '" + name + "'";
  OpenAttribute a;
  a.attr = Handle(where.check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "cannot open " + what), H5Aclose);
  a.type = Handle(where.check(H5Aget_type(a.attr.get()), "cannot read the type of " + what), H5Tclose);
  a.cls = H5Tget_class(a.type.get());
  Handle space(where.check(H5Aget_space(a.attr.get()), "cannot read the dataspace of " + what), H5Sclose);
  hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n != 1) where.fail(what + " holds " + std::to_string(n) + " values, expected one", false);
  return a;
}

const char* class_name(H5T_class_t cls) {
  switch (cls) {
    case H5T_INTEGER: return "int";
    case H5T_FLOAT: return "float";
    case H5T_STRING: return "string";
    default: return "another type";
  }
}

// Reads `count` strings (variable- or fixed-length) of an attribute or dataset through `read`.
template <typename ReadFn>
std::vector<std::string> read_strings(hid_t file_type, std::size_t count, ReadFn read, const Where& where,
                                      const std::string& what) {
  htri_t variable = where.check(H5Tis_variable_str(file_type), "cannot read the string type of " + what);
  std::vector<std::string> out;
  if (variable > 0) {
    H5T_cset_t cset = H5Tget_cset(file_type);
    Handle mem = vlen_string_type(cset < 0 ? H5T_CSET_ASCII : cset);
    if (!mem.valid()) where.fail("cannot create a string type");
    std::vector<char*> ptrs(count, nullptr);
    if (count > 0 && read(mem.get(), static_cast<void*>(ptrs.data())) < 0) where.fail("cannot read " + what);
    for (char* p : ptrs) {
      out.emplace_back(p ? p : "");
      if (p) H5free_memory(p);
    }
  } else {
    std::size_t size = H5Tget_size(file_type);
    if (size == 0) where.fail("cannot read the string size of " + what);
    Handle mem(H5Tcopy(file_type), H5Tclose);
    if (!mem.valid()) where.fail("cannot create a string type");
    std::vector<char> buf(size * count + 1, '\0');
    if (count > 0 && read(mem.get(), static_cast<void*>(buf.data())) < 0) where.fail("cannot read " + what);
    const bool space_padded = H5Tget_strpad(file_type) == H5T_STR_SPACEPAD;
    for (std::size_t i = 0; i < count; ++i) {
      std::string s(buf.data() + i * size, size);
      s.resize(std::min(s.size(), s.find('\0')));
      if (space_padded) s.erase(s.find_last_not_of(' ') + 1);
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::string read_string_attribute(hid_t obj, const std::string& name, const Where& where) {
  OpenAttribute a = open_scalar_attribute(obj, name, where);
  const std::string what = "attribute '" + name + "'";
  if (a.cls != H5T_STRING) where.fail(what + " is " + class_name(a.cls) + ", expected string", false);
  hid_t attr = a.attr.get();
  return read_strings(a.type.get(), 1, [attr](hid_t mem, void* buf) { return H5Aread(attr, mem, buf); }, where,
                      what)
      .front();
}

std::int64_t read_int_attribute(hid_t obj, const std::string& name, const Where& where) {
  OpenAttribute a = open_scalar_attribute(obj, name, where);
  const std::string what = "attribute '" + name + "'";
  if (a.cls != H5T_INTEGER) where.fail(what + " is " + class_name(a.cls) + ", expected int", false);
  std::int64_t value = 0;
  where.check(H5Aread(a.attr.get(), H5T_NATIVE_INT64, &value), "cannot read " + what);
  return value;
}

double read_float_attribute(hid_t obj, const std::string& name, const Where& where) {
  OpenAttribute a = open_scalar_attribute(obj, name, where);
  const std::string what = "attribute '" + name + "'";
  if (a.cls != H5T_FLOAT) where.fail(what + " is " + class_name(a.cls) + ", expected float", false);
  double value = 0;
  where.check(H5Aread(a.attr.get(), H5T_NATIVE_DOUBLE, &value), "cannot read " + what);
  return value;
}

Handle open_object(hid_t parent, const std::string& name, H5I_type_t expected, const Where& where) {
  Handle obj(H5Oopen(parent, name.c_str(), H5P_DEFAULT), H5Oclose);
  if (!obj.valid()) where.fail("cannot open '" + name + "'");
  if (H5Iget_type(obj.get()) != expected)
    where.fail("'" + name + "' is not a " + (expected == H5I_GROUP ? "group" : "dataset"), false);
  return obj;
}

Array read_array(hid_t group, const std::string& name, const Where& where) {
  const std::string what = "dataset '" + name + "'";
  Handle set = open_object(group, name, H5I_DATASET, where);
  Handle type(where.check(H5Dget_type(set.get()), "cannot read the type of " + what), H5Tclose);
  H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    where.fail(what + " is " + class_name(cls) + ", expected numbers", false);
  Handle space(where.check(H5Dget_space(set.get()), "cannot read the dataspace of " + what), H5Sclose);
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) where.fail("cannot read the dimensions of " + what);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    where.fail("cannot read the dimensions of " + what);
  Array array;
  array.name = name;
  // The declared size must be one the file really stores: a damaged or hostile file may declare
  // 2^40 elements (an allocation that fails or exhausts memory) or dimensions whose product
  // overflows (an array read as empty).
  std::size_t count = 1;
  for (hsize_t d : dims) {
    array.dims.push_back(static_cast<std::size_t>(d));
    if (d != 0 && count > std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(d))
      where.fail(what + ": its dimensions overflow", false);
    count *= static_cast<std::size_t>(d);
  }
  std::error_code ec;
  const std::uintmax_t file_bytes = fs::file_size(where.file(), ec);
  const std::size_t element = H5Tget_size(type.get());
  const hsize_t stored = H5Dget_storage_size(set.get());
  if (count > 0 && (ec || element == 0 || count > file_bytes / element || stored < count * element))
    where.fail(what + " declares " + std::to_string(count) + " elements of " + std::to_string(element) + " bytes but stores " +
                   std::to_string(stored) + " bytes",
               false);
  array.data.resize(count);
  if (count > 0)
    where.check(H5Dread(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, array.data.data()),
                "cannot read " + what);
  const Where unit_where = where.at(where.object() + "/" + name);
  if (has_attribute(set.get(), "unit", unit_where)) array.unit = read_string_attribute(set.get(), "unit", unit_where);
  return array;
}

ResultPoint read_point(hid_t points, const std::string& name, const Where& file_where) {
  const Where where = file_where.at("/points/" + name);
  Handle group = open_object(points, name, H5I_GROUP, file_where.at("/points"));
  ResultPoint point;
  // Attributes that are known fields must have the field's type. Unknown attributes (fields added
  // by a newer build of the same schema version) are skipped: a Record only holds known fields.
  for (const std::string& attr : attribute_names(group.get(), where)) {
    const Field* field = find_field(attr);
    if (!field) continue;
    switch (field->type) {
      case FieldType::Int: point.record.set(attr, read_int_attribute(group.get(), attr, where)); break;
      case FieldType::Float: point.record.set(attr, read_float_attribute(group.get(), attr, where)); break;
      case FieldType::String: point.record.set(attr, read_string_attribute(group.get(), attr, where)); break;
    }
  }
  for (const std::string& link : link_names(group.get(), where)) point.arrays.push_back(read_array(group.get(), link, where));
  return point;
}

Provenance read_provenance(hid_t file, const Where& file_where) {
  if (!has_link(file, "provenance", file_where))
    file_where.fail("no /provenance group (the writer did not commit the file)", false);
  const Where where = file_where.at("/provenance");
  Handle group = open_object(file, "provenance", H5I_GROUP, file_where);
  Provenance p;
  for (const auto& s : kProvenanceStrings) {
    if (!has_attribute(group.get(), s.name, where)) where.fail(std::string("missing attribute '") + s.name + "'", false);
    p.*s.member = read_string_attribute(group.get(), s.name, where);
  }
  if (!has_attribute(group.get(), "mpi_size", where)) where.fail("missing attribute 'mpi_size'", false);
  p.mpi_size = static_cast<int>(read_int_attribute(group.get(), "mpi_size", where));
  // Optional: files written before resumable runs have neither.
  if (has_attribute(group.get(), "run_starts", where)) p.run_starts = read_string_attribute(group.get(), "run_starts", where);
  if (has_attribute(group.get(), "restarts", where))
    p.restarts = static_cast<int>(read_int_attribute(group.get(), "restarts", where));

  if (!has_link(group.get(), "hosts", where)) where.fail("missing dataset 'hosts'", false);
  {
    Handle set = open_object(group.get(), "hosts", H5I_DATASET, where);
    Handle type(where.check(H5Dget_type(set.get()), "cannot read the type of dataset 'hosts'"), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING) where.fail("dataset 'hosts' does not hold strings", false);
    Handle space(where.check(H5Dget_space(set.get()), "cannot read the dataspace of dataset 'hosts'"), H5Sclose);
    hssize_t n = H5Sget_simple_extent_npoints(space.get());
    if (n < 0) where.fail("cannot read the size of dataset 'hosts'");
    hid_t id = set.get();
    p.hosts = read_strings(
        type.get(), static_cast<std::size_t>(n),
        [id](hid_t mem, void* buf) { return H5Dread(id, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf); }, where,
        "dataset 'hosts'");
  }
  const std::pair<const char*, std::vector<std::pair<std::string, std::string>>*> maps[] = {
      {"libraries", &p.libraries}, {"settings", &p.settings}};
  for (const auto& [name, entries] : maps) {
    if (!has_link(group.get(), name, where)) where.fail(std::string("missing group '") + name + "'", false);
    const Where sub = file_where.at(std::string("/provenance/") + name);
    Handle g = open_object(group.get(), name, H5I_GROUP, where);
    for (const std::string& key : attribute_names(g.get(), sub))
      entries->emplace_back(key, read_string_attribute(g.get(), key, sub));
  }
  return p;
}

}  // namespace

ResultRun read_result_file(const std::string& path) {
  quiet_hdf5();
  const Where where(path);
  // Never open a FIFO (it would block) or a device (/dev/zero never ends).
  if (const std::string kind = not_a_regular_file(path); !kind.empty()) where.fail(kind, false);
  if (access(path.c_str(), R_OK) != 0) where.fail(std::string("cannot read: ") + std::strerror(errno), false);

  verify_checksum_block(path);  // before HDF5 parses anything

  Handle fapl = file_access_plist(where);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.valid()) where.fail("not a readable HDF5 file");

  ResultRun run;
  run.path = path;
  if (!has_attribute(file.get(), "format", where))
    where.fail(std::string("not an hpcnn result file (no 'format' attribute in /)"), false);
  std::string format = read_string_attribute(file.get(), "format", where.at("/"));
  if (format != kFormat)
    where.fail("not an hpcnn result file (format is '" + format + "', expected '" + kFormat + "')", false);
  if (!has_attribute(file.get(), "schema_version", where)) where.fail("no 'schema_version' attribute in /", false);
  std::int64_t version = read_int_attribute(file.get(), "schema_version", where.at("/"));
  if (version != kSchemaVersion)
    where.fail("schema version " + std::to_string(version) + " is not supported (this build reads version " +
                   std::to_string(kSchemaVersion) + ")",
               false);
  run.schema_version = static_cast<int>(version);

  run.provenance = read_provenance(file.get(), where);

  if (!has_link(file.get(), "points", where)) where.fail("no /points group", false);
  Handle points = open_object(file.get(), "points", H5I_GROUP, where);
  // Points are numbered 000000, 000001, ...; sorted by number (names widen past 999999).
  std::vector<std::pair<unsigned long long, std::string>> names;
  for (std::string& name : link_names(points.get(), where.at("/points"))) {
    if (name.empty() || name.size() > 18 || name.find_first_not_of("0123456789") != std::string::npos)
      where.at("/points").fail("unexpected object '" + name + "' (points are numbered)", false);
    names.emplace_back(std::stoull(name), std::move(name));
  }
  std::sort(names.begin(), names.end());
  for (const auto& entry : names) run.points.push_back(read_point(points.get(), entry.second, where));
  return run;
}

std::vector<std::string> find_result_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      files.push_back(path);  // a file, or a missing path that read_result_file will report
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) throw RuntimeError(path + ": cannot list directory: " + ec.message());
    while (it != end) {
      const fs::path& p = it->path();
      std::error_code fec;
      // Hidden names are a run's own: temporary files and the journal of a run in progress.
      if (p.filename().string().rfind('.', 0) == 0) {
        if (it->is_directory(fec)) it.disable_recursion_pending();
      } else if (p.extension() == ".h5" && it->is_regular_file(fec)) {
        found.push_back(p.string());
      }
      it.increment(ec);
      if (ec) throw RuntimeError(path + ": cannot list directory: " + ec.message());
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

}  // namespace hpcnn
