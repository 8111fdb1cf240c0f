#include "analysis/html_page.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/durable_file.hpp"
#include "base/errors.hpp"

namespace hpcnn {

namespace {

// Nothing may be fetched when the page is opened: the browser itself refuses anything but the
// page's own inline styles and script.
const char* const kHead = R"(<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 1.6em; } h3 { font-size: 1.05em; }
div.table { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; cursor: pointer; white-space: nowrap; }
th.num, td.num { text-align: right; }
tr.fail { background: #f9d3c0; } tr.fail td.verdict { color: #a63c00; font-weight: bold; }
tr.unstable { background: #fdf0b3; } tr.faster { background: #d5e6f3; }
td.ok { background: #e3f1dd; } td.low { background: #fdf0b3; } td.bad { background: #e8957a; font-weight: bold; }
td.na { background: #f4f4f4; color: #999; } table.map td { text-align: right; padding: 0.1em 0.3em; }
table.map td:first-child { text-align: left; font-weight: bold; }
p.common { font-family: monospace; font-size: 0.85em; }
p.problem { color: #a63c00; }
figure { margin: 0.8em 0; } figcaption { font-size: 0.85em; color: #555; }
figure svg { max-width: 100%; height: auto; }
details { margin: 0.3em 0; } summary { cursor: pointer; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; font-size: 0.8em; }
</style>
)";

// A click on a header sorts its table's rows by that column (numbers by value, "-" last), a second
// click the other way.
const char* const kSortScript = R"(<script>
for (const table of document.querySelectorAll('table')) {
  table.querySelectorAll('th').forEach((th, col) => th.addEventListener('click', () => {
    const body = table.tBodies[0];
    const numeric = th.classList.contains('num');
    const up = th.dataset.order !== 'up';
    th.dataset.order = up ? 'up' : 'down';
    const key = (row) => {
      const text = row.cells[col] ? row.cells[col].textContent : '';
      const value = parseFloat(text);
      return numeric ? (isNaN(value) ? -Infinity : value) : text;
    };
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      const d = numeric ? x - y : String(x).localeCompare(String(y));
      return up ? d : -d;
    });
    rows.forEach((row) => body.appendChild(row));
  }));
}
</script>
)";

}  // namespace

std::string html_escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // XML 1.0 (the JUnit file) forbids most control characters even escaped: shown as '?'.
        out += (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') ? '?' : c;
    }
  }
  return out;
}

std::string inline_svg(const std::string& svg_file_text) {
  const std::size_t start = svg_file_text.find("<svg");
  if (start == std::string::npos) throw RuntimeError("the plot holds no <svg> element");
  return svg_file_text.substr(start);
}

HtmlPage::HtmlPage(std::string title) : title_(std::move(title)) {}

void HtmlPage::heading(const std::string& text, int level) {
  const char tag[] = {'h', static_cast<char>('0' + std::clamp(level, 2, 4)), '\0'};
  body_ << "<" << tag << ">" << html_escaped(text) << "</" << tag << ">\n";
}

void HtmlPage::paragraph(const std::string& text, const std::string& css_class) {
  body_ << (css_class.empty() ? "<p>" : "<p class=\"" + css_class + "\">") << html_escaped(text) << "</p>\n";
}

void HtmlPage::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                     const std::vector<std::string>& row_classes, const std::vector<bool>& numeric) {
  const auto is_num = [&numeric](std::size_t c) { return c < numeric.size() && numeric[c]; };
  body_ << "<div class=\"table\"><table>\n<thead><tr>";
  for (std::size_t c = 0; c < header.size(); ++c)
    body_ << (is_num(c) ? "<th class=\"num\">" : "<th>") << html_escaped(header[c]) << "</th>";
  body_ << "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::string cls = r < row_classes.size() ? row_classes[r] : "";
    body_ << (cls.empty() ? "<tr>" : "<tr class=\"" + cls + "\">");
    for (std::size_t c = 0; c < rows[r].size(); ++c) {
      const bool verdict = c < header.size() && header[c] == "verdict";
      body_ << (is_num(c) ? "<td class=\"num\">" : verdict ? "<td class=\"verdict\">" : "<td>") << html_escaped(rows[r][c])
            << "</td>";
    }
    body_ << "</tr>\n";
  }
  body_ << "</tbody>\n</table></div>\n";
}

void HtmlPage::cell_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& cells,
                          const std::vector<std::vector<std::string>>& cell_classes) {
  body_ << "<div class=\"table\"><table class=\"map\">\n<thead><tr>";
  for (const std::string& h : header) body_ << "<th>" << html_escaped(h) << "</th>";
  body_ << "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 0; r < cells.size(); ++r) {
    body_ << "<tr>";
    for (std::size_t c = 0; c < cells[r].size(); ++c) {
      const std::string cls = r < cell_classes.size() && c < cell_classes[r].size() ? cell_classes[r][c] : "";
      body_ << (cls.empty() ? "<td>" : "<td class=\"" + cls + "\">") << html_escaped(cells[r][c]) << "</td>";
    }
    body_ << "</tr>\n";
  }
  body_ << "</tbody>\n</table></div>\n";
}

void HtmlPage::records(const std::vector<Record>& rows, const std::vector<std::string>& columns) {
  std::vector<std::string> header;
  std::vector<bool> numeric;
  for (const std::string& name : columns) {
    const Field* field = find_field(name);
    if (!field) throw std::logic_error("HtmlPage::records: unknown column '" + name + "'");
    header.push_back(*field->unit ? name + " [" + field->unit + "]" : name);
    numeric.push_back(field->type != FieldType::String);
  }
  std::vector<std::vector<std::string>> cells;
  for (const Record& r : rows) {
    std::vector<std::string> row;
    for (const std::string& name : columns) row.push_back(r.text(name));
    cells.push_back(std::move(row));
  }
  table(header, cells, {}, numeric);
}

void HtmlPage::figure(const std::string& svg_element, const std::string& caption) {
  body_ << "<figure>\n" << svg_element << "\n<figcaption>" << html_escaped(caption) << "</figcaption>\n</figure>\n";
}

void HtmlPage::details(const std::string& summary, const std::string& body) {
  body_ << "<details><summary>" << html_escaped(summary) << "</summary>\n<pre>" << html_escaped(body)
        << "</pre></details>\n";
}

std::string HtmlPage::document() const {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n" + std::string(kHead) + "<title>" + html_escaped(title_) +
         "</title>\n</head>\n<body>\n<h1>" + html_escaped(title_) + "</h1>\n" + body_.str() + kSortScript +
         "</body>\n</html>\n";
}

void write_html(const std::string& file, const HtmlPage& page) {
  write_file_durably(file, page.document(), "the HTML page");
}

}  // namespace hpcnn
