// One self-contained HTML page of results (hpcnn-summary --html): styles inline, plots as inline
// SVG, one small inline script that sorts a table when its header is clicked; nothing is fetched
// when the page is opened (no external script, font, style or image). No MPI, no HDF5.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "results/record.hpp"

namespace hpcnn {

// Text for HTML or XML (the page, the JUnit file): & < > " ' escaped, control characters other
// than tab and newline shown as '?' (XML 1.0 forbids them).
std::string html_escaped(const std::string& text);

// The <svg> element of an SVG file's text, for inlining: what comes before it (the XML
// declaration, a DOCTYPE, comments) dropped. RuntimeError when the text holds no <svg>.
std::string inline_svg(const std::string& svg_file_text);

// The page, built in reading order.
class HtmlPage {
 public:
  explicit HtmlPage(std::string title);

  void heading(const std::string& text, int level = 2);
  void paragraph(const std::string& text, const std::string& css_class = "");
  // A table: the header row, then the rows; `row_classes` (one per row, may be empty) colour rows
  // ("fail", "unstable", "ok", "faster"); `numeric` (one per column, may be empty) right-aligns
  // a column and sorts it by number. Every table sorts by a click on a header.
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
             const std::vector<std::string>& row_classes = {}, const std::vector<bool>& numeric = {});
  // A map: a table whose every cell has a colour class of its own ("ok", "low", "bad", "na", or
  // none), the first column a heading for its row. For node maps and link matrices.
  void cell_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& cells,
                  const std::vector<std::vector<std::string>>& cell_classes);
  // Records as a table of `columns` (known fields): the header says each unit, cells as the text
  // tables print them.
  void records(const std::vector<Record>& rows, const std::vector<std::string>& columns);
  // An inline SVG figure (inline_svg's text) and its caption.
  void figure(const std::string& svg_element, const std::string& caption);
  // A section folded away until clicked: `summary` shown, `body` preformatted inside.
  void details(const std::string& summary, const std::string& body);

  // The whole document.
  std::string document() const;

 private:
  std::string title_;
  std::ostringstream body_;
};

// The page into `file`, whole or not at all (write_file_durably): RuntimeError naming the file.
void write_html(const std::string& file, const HtmlPage& page);

}  // namespace hpcnn
