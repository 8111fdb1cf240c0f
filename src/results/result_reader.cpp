// Reading a result file (results/result_file.hpp; schema in docs/RESULTS.md): the checksum block
// first, then HDF5, every object checked against the schema.
#include "results/result_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/errors.hpp"
#include "base/file_kind.hpp"
#include "results/checksum_block.hpp"
#include "results/hdf5_io.hpp"
#include "results/result_schema.hpp"
#include "results/delivered_figures.hpp"

namespace hpcnn {

using namespace h5;

namespace {

namespace fs = std::filesystem;

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
  complete_delivered_figures(point);
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
  if (has_attribute(group.get(), "machine", where)) p.machine = read_string_attribute(group.get(), "machine", where);
  if (has_attribute(group.get(), "session", where)) p.session = read_string_attribute(group.get(), "session", where);
  if (has_attribute(group.get(), "default_table", where))
    p.default_table = read_string_attribute(group.get(), "default_table", where);
  if (has_attribute(group.get(), "fault_injection", where))
    p.fault_injection = read_string_attribute(group.get(), "fault_injection", where);

  if (!has_link(group.get(), "hosts", where)) where.fail("missing dataset 'hosts'", false);
  p.hosts = read_string_dataset(group.get(), "hosts", where);
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
