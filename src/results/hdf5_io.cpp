#include "results/hdf5_io.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <stdexcept>

namespace hpcnn::h5 {

namespace {

herr_t innermost_error(unsigned, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (out->empty() && err->desc && *err->desc) *out = err->desc;
  return 0;
}

}  // namespace

void quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string hdf5_reason() {
  std::string desc;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_error, &desc);
  H5Eclear2(H5E_DEFAULT);
  for (char& c : desc)
    if (c == '\n' || c == '\r') c = ' ';
  return desc.empty() ? desc : " (" + desc + ")";
}

Handle vlen_string_type(H5T_cset_t cset) {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  if (t.valid() && H5Tset_size(t.get(), H5T_VARIABLE) >= 0 && H5Tset_cset(t.get(), cset) >= 0)
    return t;
  return Handle();
}

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

Handle file_access_plist(const Where& where) {
  Handle fapl(where.check(H5Pcreate(H5P_FILE_ACCESS), "cannot create a property list"), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(fapl.get(), false, true);
#endif
  where.check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "cannot set the close degree");
  return fapl;
}

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

Handle tracked_group_plist(const Where& where) {
  Handle plist(where.check(H5Pcreate(H5P_GROUP_CREATE), "cannot create a property list"), H5Pclose);
  where.check(H5Pset_attr_creation_order(plist.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
              "cannot set attribute creation order");
  return plist;
}

}  // namespace

Handle create_group(hid_t parent, const std::string& name, const Where& where) {
  Handle plist = tracked_group_plist(where);
  return Handle(where.check(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, plist.get(), H5P_DEFAULT),
                            "cannot create group '" + name + "'"),
                H5Gclose);
}

namespace {

void write_attribute(hid_t obj, const std::string& name, hid_t file_type, hid_t mem_type,
                     const void* buf, const Where& where) {
  const std::string what = "attribute '" + name + "'";
  Handle space(where.check(H5Screate(H5S_SCALAR), "cannot create a dataspace"), H5Sclose);
  Handle attr(where.check(H5Acreate2(obj, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                          "cannot create " + what),
              H5Aclose);
  where.check(H5Awrite(attr.get(), mem_type, buf), "cannot write " + what);
}

}  // namespace

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

}  // namespace

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

namespace {

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

}  // namespace

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
  const std::uintmax_t file_bytes = std::filesystem::file_size(where.file(), ec);
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

std::vector<std::string> read_string_dataset(hid_t group, const std::string& name, const Where& where) {
  const std::string what = "dataset '" + name + "'";
  Handle set = open_object(group, name, H5I_DATASET, where);
  Handle type(where.check(H5Dget_type(set.get()), "cannot read the type of " + what), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) where.fail(what + " does not hold strings", false);
  Handle space(where.check(H5Dget_space(set.get()), "cannot read the dataspace of " + what), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) where.fail("cannot read the size of " + what);
  const hid_t id = set.get();
  return read_strings(
      type.get(), static_cast<std::size_t>(n),
      [id](hid_t mem, void* buf) { return H5Dread(id, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf); }, where, what);
}

}  // namespace hpcnn::h5
