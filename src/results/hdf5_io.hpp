// The HDF5 plumbing of the result files (results/result_file.hpp), through the HDF5 C API only:
// owned identifiers, error context, and the typed reads and writes of attributes, arrays and
// string datasets. Every HDF5 call is checked; a failure becomes RuntimeError("PATH: OBJECT: what
// failed (HDF5's innermost message)"). HDF5's own error printing is switched off (quiet_hdf5). No
// exception ever crosses an HDF5 frame: the only callback (attribute names) just collects names.
// Used by the result writer and reader only.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/errors.hpp"
#include "results/record.hpp"

namespace hpcnn::h5 {

// HDF5 prints nothing of its own; errors are ours.
void quiet_hdf5();
// " (HDF5's innermost message)" for the error just raised, or "" when there is none.
std::string hdf5_reason();

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

// A variable-length string type of `cset`; invalid when HDF5 cannot make one.
Handle vlen_string_type(H5T_cset_t cset = H5T_CSET_UTF8);
// Strings are stored as UTF-8; bytes that are not valid UTF-8 (a Latin-1 command line, say) become
// U+FFFD so that every reader can decode the file.
std::string valid_utf8(const std::string& s);
// No file locking (result files are written by one process under a unique temporary name, and
// locking fails on some parallel and network file systems); strong close.
Handle file_access_plist(const Where& where);

// ---- writing
// A group whose attributes keep their creation order (so settings read back in option order).
Handle create_group(hid_t parent, const std::string& name, const Where& where);
void write_string_attribute(hid_t obj, const std::string& name, const std::string& value, const Where& where);
void write_int32_attribute(hid_t obj, const std::string& name, int value, const Where& where);
// A record value: int64, double or string.
void write_value(hid_t obj, const std::string& name, const Value& value, const Where& where);
// Programming errors in an Array (a bad name, values that do not fill its dims): std::logic_error.
void check_array(const Array& array);
void write_array(hid_t group, const Array& array, const Where& where);
void write_string_dataset(hid_t group, const std::string& name, const std::vector<std::string>& values,
                          const Where& where);

// ---- reading
// Attribute names of an object, in creation order when the file tracks it, else by name.
std::vector<std::string> attribute_names(hid_t obj, const Where& where);
// Names of a group's links, by name.
std::vector<std::string> link_names(hid_t group, const Where& where);
bool has_attribute(hid_t obj, const std::string& name, const Where& where);
bool has_link(hid_t group, const std::string& name, const Where& where);
// Scalar attributes of the type asked for; another type or more than one value fails naming both.
std::string read_string_attribute(hid_t obj, const std::string& name, const Where& where);
std::int64_t read_int_attribute(hid_t obj, const std::string& name, const Where& where);
double read_float_attribute(hid_t obj, const std::string& name, const Where& where);
// A group or dataset, checked to be the kind expected.
Handle open_object(hid_t parent, const std::string& name, H5I_type_t expected, const Where& where);
// A numeric dataset as doubles, its size checked against what the file really stores.
Array read_array(hid_t group, const std::string& name, const Where& where);
// The strings of a 1-D string dataset (variable- or fixed-length).
std::vector<std::string> read_string_dataset(hid_t group, const std::string& name, const Where& where);

}  // namespace hpcnn::h5
