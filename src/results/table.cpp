// Text, Markdown and CSV tables derived from the field table.
#include "results/table.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "base/errors.hpp"

namespace hpcnn {

namespace {

bool is_numeric(const Field& field) { return field.type != FieldType::String; }

// One line per cell: newlines and tabs inside a value would break the layout.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

void trim_right(std::string& line) { line.erase(line.find_last_not_of(' ') + 1); }

std::vector<const Field*> lookup(const std::vector<std::string>& columns, const char* who) {
  std::vector<const Field*> out;
  for (const auto& name : columns) {
    const Field* field = find_field(name);
    if (!field) throw std::logic_error(std::string(who) + ": unknown column '" + name + "'");
    out.push_back(field);
  }
  return out;
}

std::string unit_label(const Field& field) {
  return *field.unit ? std::string("[") + field.unit + "]" : std::string();
}

// One text-table line: cells two spaces apart, numbers right-aligned, no trailing blanks.
std::string text_line(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths,
                      const std::vector<const Field*>& fields) {
  std::string s;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c) s += "  ";
    s += pad(cells[c], widths[c], is_numeric(*fields[c]));
  }
  trim_right(s);
  return s + "\n";
}

std::string csv_cell(const Record& record, const std::string& name) {
  const Value* value = record.get(name);
  if (!value) return {};
  if (const auto* i = std::get_if<std::int64_t>(value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(value)) {
    char buf[64];
    auto result = std::to_chars(buf, buf + sizeof buf, *d);  // shortest exact round trip
    return std::string(buf, result.ptr);
  }
  const std::string& s = std::get<std::string>(*value);
  bool quote = s.find_first_of(",\"\r\n") != std::string::npos ||
               (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string markdown_escape(const std::string& s) {
  std::string out;
  for (char c : one_line(s)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::optional<TableFormat> parse_table_format(const std::string& name) {
  if (name == "text") return TableFormat::Text;
  if (name == "markdown") return TableFormat::Markdown;
  if (name == "csv") return TableFormat::Csv;
  return std::nullopt;
}

std::vector<std::string> parse_columns(const std::string& list) {
  std::vector<std::string> columns;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = list.find(',', start);
    std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty()) throw UsageError("empty column name in '" + list + "'");
    if (!find_field(name)) throw UsageError("unknown column '" + name + "'");
    columns.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return columns;
}

std::string render_table(const std::vector<Record>& records, const std::vector<std::string>& columns,
                         TableFormat format) {
  const std::vector<const Field*> fields = lookup(columns, "render_table");
  std::string out;

  if (format == TableFormat::Csv) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c) out += ',';
      out += columns[c];
    }
    out += '\n';
    for (const Record& record : records) {
      for (std::size_t c = 0; c < columns.size(); ++c) {
        if (c) out += ',';
        out += csv_cell(record, columns[c]);
      }
      out += '\n';
    }
    return out;
  }

  // Text and Markdown: cells formatted with the field's format, then padded to column widths.
  const bool markdown = format == TableFormat::Markdown;
  std::vector<std::vector<std::string>> cells;
  for (const Record& record : records) {
    std::vector<std::string> row;
    for (const auto& name : columns)
      row.push_back(markdown ? markdown_escape(record.text(name)) : one_line(record.text(name)));
    cells.push_back(std::move(row));
  }
  std::vector<std::string> names, units;
  bool any_unit = false;
  for (const Field* field : fields) {
    std::string unit = unit_label(*field);
    any_unit = any_unit || !unit.empty();
    if (markdown) {
      names.push_back(unit.empty() ? std::string(field->name) : std::string(field->name) + " " + unit);
    } else {
      names.push_back(field->name);
      units.push_back(unit);
    }
  }
  std::vector<std::size_t> widths;
  for (std::size_t c = 0; c < fields.size(); ++c) {
    std::size_t w = std::max<std::size_t>(names[c].size(), markdown ? 3 : 0);
    if (!markdown) w = std::max(w, units[c].size());
    for (const auto& row : cells) w = std::max(w, row[c].size());
    widths.push_back(w);
  }

  auto line = [&](const std::vector<std::string>& row) {
    if (!markdown) return text_line(row, widths, fields);
    std::string s;
    for (std::size_t c = 0; c < row.size(); ++c) {
      s += c ? " | " : "| ";
      s += pad(row[c], widths[c], is_numeric(*fields[c]));
    }
    return s + " |\n";
  };

  out += line(names);
  if (markdown) {
    std::string rule;
    for (std::size_t c = 0; c < fields.size(); ++c) {
      std::string dashes(widths[c], '-');
      if (is_numeric(*fields[c])) dashes.back() = ':';
      rule += c ? " | " : "| ";
      rule += dashes;
    }
    out += rule + " |\n";
  } else if (any_unit) {
    out += line(units);
  }
  for (const auto& row : cells) out += line(row);
  return out;
}

TextTableStream::TextTableStream(std::vector<std::string> columns, std::size_t min_width)
    : columns_(std::move(columns)), fields_(lookup(columns_, "TextTableStream")) {
  for (const Field* field : fields_)
    widths_.push_back(std::max({std::strlen(field->name), unit_label(*field).size(), min_width}));
}

std::string TextTableStream::header() const {
  std::vector<std::string> names, units;
  bool any_unit = false;
  for (const Field* field : fields_) {
    names.push_back(field->name);
    units.push_back(unit_label(*field));
    any_unit = any_unit || !units.back().empty();
  }
  return text_line(names, widths_, fields_) + (any_unit ? text_line(units, widths_, fields_) : std::string());
}

std::string TextTableStream::row(const Record& record) const {
  std::vector<std::string> cells;
  for (const auto& name : columns_) cells.push_back(one_line(record.text(name)));
  return text_line(cells, widths_, fields_);
}

namespace {

// "a=1 b=x y c=3" -> {"a=1", "b=x y", "c=3"}: a word without '=' belongs to the value before it.
std::vector<std::string> setting_pairs(const std::string& label) {
  std::vector<std::string> pairs;
  std::istringstream words(label);
  for (std::string word; words >> word;) {
    if (word.find('=') == std::string::npos && !pairs.empty())
      pairs.back().append(" ").append(word);
    else
      pairs.push_back(word);
  }
  return pairs;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out.append(out.empty() ? "" : " ").append(w);
  return out;
}

}  // namespace

std::string settings_table_text(const std::string& common, const std::vector<std::string>& header,
                                const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::vector<std::string>> cells = {header};
  cells.insert(cells.end(), rows.begin(), rows.end());
  return (common.empty() ? "" : "settings of every row: " + common + "\n") + aligned_text(cells);
}

SettingsSplit split_settings(const std::vector<std::string>& labels) {
  SettingsSplit out;
  if (labels.size() < 2) {
    out.own = labels;
    return out;
  }
  std::vector<std::vector<std::string>> rows;
  for (const std::string& l : labels) rows.push_back(setting_pairs(l));
  std::vector<std::string> common;
  for (const std::string& pair : rows.front()) {
    const auto in = [&](const std::vector<std::string>& r) { return std::find(r.begin(), r.end(), pair) != r.end(); };
    if (std::all_of(rows.begin() + 1, rows.end(), in)) common.push_back(pair);
  }
  out.common = joined(common);
  for (const auto& r : rows) {
    std::vector<std::string> own;
    for (const std::string& pair : r)
      if (std::find(common.begin(), common.end(), pair) == common.end()) own.push_back(pair);
    out.own.push_back(own.empty() ? "-" : joined(own));
  }
  return out;
}

std::string aligned_text(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (row.size() > width.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += "\n";
  }
  return out;
}

}  // namespace hpcnn
