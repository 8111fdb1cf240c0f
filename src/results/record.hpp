// One result record (a sweep point's settings and figures) and the field table that describes
// every column any suite writes: name, type, unit, print format. The HDF5 writer and reader, the
// text/Markdown/CSV tables of hpcnn-summary and docs/RESULTS.md all derive from fields().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace hpcnn {

enum class FieldType { Int, Float, String };

// What a field is to a reader: a setting that identifies what was measured (points are matched
// on these), another setting (how it was measured), or a figure (what was measured).
enum class FieldRole { Key, Setting, Figure };

struct Field {
  const char* name;    // "img_per_s"
  FieldType type;
  const char* unit;    // "images/s", "s", "" for none
  const char* format;  // printf format for text tables, e.g. "%.1f"
  const char* help;    // one line, for docs and --help
  FieldRole role;
  const char* option;  // the command-line option a setting comes from ("image-size"); "" for none
};

// Every known field, in the order tables show them.
const std::vector<Field>& fields();
const Field* find_field(const std::string& name);  // nullptr when unknown
const Field* field_of_option(std::string_view option);  // the field an option sets, or nullptr
// The Key fields in table order: what identifies a point across runs (hpcnn-summary --compare).
std::vector<std::string> key_fields();
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

// The arrays a point may carry, declared once with their units (like the fields).
struct ArrayField {
  const char* name;  // "iter_time_s"
  const char* unit;  // "s"
  const char* help;
  bool bounded = false;  // a per-iteration series stored as its histogram beyond a count (bounded_series.hpp)
};
const std::vector<ArrayField>& array_fields();

// A numeric array stored beside a record (per-iteration times, ...): row-major, dims[0] slowest.
struct Array {
  std::string name;  // "iter_time_s"
  std::string unit;  // "s"
  std::vector<std::size_t> dims;
  std::vector<double> data;
};

// An array of array_fields() with its declared unit (std::logic_error for an undeclared name).
Array make_array(const std::string& name, std::vector<std::size_t> dims, std::vector<double> data);

}  // namespace hpcnn
