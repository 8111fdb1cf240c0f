// One result record (a sweep point's settings and figures) and the field table that describes
// every column any suite writes: name, type, unit, print format. The HDF5 writer and reader, the
// text/Markdown/CSV tables of hpcnn-summary and docs/RESULTS.md all derive from fields().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace hpcnn {

enum class FieldType { Int, Float, String };

struct Field {
  const char* name;    // "img_per_s"
  FieldType type;
  const char* unit;    // "images/s", "s", "" for none
  const char* format;  // printf format for text tables, e.g. "%.1f"
  const char* help;    // one line, for docs and --help
};

// Every known field, in the order tables show them.
const std::vector<Field>& fields();
const Field* find_field(const std::string& name);  // nullptr when unknown
const char* type_name(FieldType type);             // "int", "float", "string"

using Value = std::variant<std::int64_t, double, std::string>;

// Ordered name -> value pairs; names must be in fields() (set() throws std::logic_error otherwise,
// and when the value's type does not match the field's).
class Record {
 public:
  void set(const std::string& name, Value value);
  const Value* get(const std::string& name) const;
  std::optional<double> number(const std::string& name) const;  // Int or Float
  std::string text(const std::string& name) const;  // formatted with the field's format; "" if unset
  const std::vector<std::pair<std::string, Value>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, Value>> items_;
};

// A numeric array stored beside a record (per-iteration times, ...): row-major, dims[0] slowest.
struct Array {
  std::string name;  // "iter_time_s"
  std::string unit;  // "s"
  std::vector<std::size_t> dims;
  std::vector<double> data;
};

}  // namespace hpcnn
