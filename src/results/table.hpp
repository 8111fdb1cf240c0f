// Tables of records as aligned text, Markdown or CSV; headers, units and number formats all come
// from the field table (results/record.hpp). Used by hpcnn-summary; any caller may use it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/record.hpp"

namespace hpcnn {

enum class TableFormat { Text, Markdown, Csv };

// "text", "markdown", "csv" -> the format; nullopt for anything else.
std::optional<TableFormat> parse_table_format(const std::string& name);

// "a,b,c" -> {"a","b","c"}; throws UsageError naming the first column that is not a known field
// (or an empty list).
std::vector<std::string> parse_columns(const std::string& list);

// One row per record, one column per name (each must be a known field: else std::logic_error).
// A record without a field gets an empty cell.
//   Text    : aligned columns two spaces apart, numbers right-aligned; a second header line holds
//             the units in brackets ("[images/s]") when any column has one; no trailing blanks.
//   Markdown: a pipe table, header "name [unit]", numeric columns right-aligned ("--:").
//   Csv     : header = field names; Int as is, Float in the shortest form that reads back exactly,
//             strings quoted (RFC 4180) only when they hold a comma, quote, CR/LF or edge blanks.
// Text and Markdown print values with the field's format; every line ends with '\n'.
std::string render_table(const std::vector<Record>& records, const std::vector<std::string>& columns,
                         TableFormat format);

// Rows of ready-made cells as text: columns left-aligned, two blanks apart, no trailing blanks
// after the last column; every line ends with '\n' (the verdict and trend tables).
std::string aligned_text(const std::vector<std::vector<std::string>>& rows);

// Several rows' key settings ("suite=hpcnn-train model=lenet5 ...", settings_key in report.hpp):
// the "key=value" pairs that every row has, once, in the first row's order, and each row's other
// pairs; a row whose pairs are all common gets "-". Fewer than two rows: nothing is common.
struct SettingsSplit {
  std::string common;
  std::vector<std::string> own;
};
SettingsSplit split_settings(const std::vector<std::string>& labels);
// A table of such rows as aligned text: "settings of every row: COMMON" above it (when there is
// any), then the header and the rows.
std::string settings_table_text(const std::string& common, const std::vector<std::string>& header,
                                const std::vector<std::vector<std::string>>& rows);

// The text format for rows printed one by one as they are measured (a suite's live output):
// widths are fixed up front from each field's name, unit and `min_width`, so the header can be
// printed before the first row; a longer value widens only its own row.
class TextTableStream {
 public:
  explicit TextTableStream(std::vector<std::string> columns, std::size_t min_width = 8);  // logic_error if unknown
  std::string header() const;                   // names, then "[unit]" line when any column has one
  std::string row(const Record& record) const;  // one line, '\n'-terminated

 private:
  std::vector<std::string> columns_;
  std::vector<const Field*> fields_;
  std::vector<std::size_t> widths_;
};

}  // namespace hpcnn
