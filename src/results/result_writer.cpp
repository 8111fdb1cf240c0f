// Writing a result file (results/result_file.hpp; schema in docs/RESULTS.md): built in memory by
// HDF5's core driver, then written whole behind its checksum block, made durable and renamed.
#include "results/result_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>

#include "base/durable_file.hpp"
#include "base/errors.hpp"
#include "base/activity.hpp"
#include "results/checksum_block.hpp"
#include "results/hdf5_io.hpp"
#include "results/result_schema.hpp"

namespace hpcnn {

using namespace h5;

namespace {

namespace fs = std::filesystem;

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
    write_string_attribute(group.get(), "machine", provenance.machine, where);
    write_string_attribute(group.get(), "session", provenance.session, where);
    write_string_attribute(group.get(), "default_table", provenance.default_table, where);
    write_string_attribute(group.get(), "fault_injection", provenance.fault_injection, where);
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
    // Half-written from here on: the phase the tests' fault injection kills a rank at (its place
    // "commit"), as a node lost mid-write would leave the file.
    activity::set_phase("writing a result file");
    write_fully(fd, image.data(), image.size(), temp_path_);
    if (::fsync(fd) != 0 && errno != EINVAL)
      throw RuntimeError(temp_path_ + ": cannot sync to disk: " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw RuntimeError(temp_path_ + ": cannot write the result file: " + std::strerror(errno));
}

}  // namespace hpcnn
