// What hpcnn-summary does to table rows besides printing them: filter (--where), sort and group
// (--by), compare with a baseline (--compare), and plot through gnuplot (--plot). Rows are the
// Records a table preset produced (analysis/table_presets.hpp). No MPI, no HDF5.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "results/record.hpp"

namespace hpcnn {

// "model=resnet18,batch=64" -> {{"model","resnet18"},{"batch","64"}}; throws UsageError for an
// element without '=' or a name that is not a field.
std::vector<std::pair<std::string, std::string>> parse_where(const std::string& text);
// Every condition holds: the field's value equals the text (numbers compared as numbers, so
// "lr=0.1" matches 0.1 whatever its format). A row without the field does not match.
bool row_matches(const Record& row, const std::vector<std::pair<std::string, std::string>>& where);
// Stable sort by the fields in order (numbers numerically, text lexically, missing last).
void sort_rows(std::vector<Record>& rows, const std::vector<std::string>& by);

// --compare (analysis/verdict.hpp): rows are matched on the Key fields they have (key_fields(),
// record.hpp), never on file names.
std::string settings_key(const Record& row);  // "suite=hpcnn-train model=lenet5 ..." from key_fields()
// The same settings in full precision (numbers as %.17g), for matching: keys do not depend on print formats.
std::string exact_settings_key(const Record& row);
// "5%" -> 0.05, "0.05" -> 0.05; throws UsageError naming the value otherwise.
double parse_tolerance(const std::string& text);

// --plot FILE.png|FILE.svg for table `table` (one whose preset has a plot, analysis/plots.hpp): writes a
// gnuplot script with the data inline and runs gnuplot. Throws RuntimeError when gnuplot is not
// installed (naming the package), when the table has no plot, or when gnuplot fails.
std::string gnuplot_script(const std::string& table, const std::vector<Record>& rows, const std::string& file);
void plot_rows(const std::string& table, const std::vector<Record>& rows, const std::string& file);

// --plot with --trend (analysis/trend.hpp): one panel per point and metric: the metric over time,
// the band each run was judged against (median of the runs before -+ band), flagged runs marked.
// Throws RuntimeError when there is nothing to plot, gnuplot is missing or fails.
struct PointTrend;
std::string trend_gnuplot_script(const std::vector<PointTrend>& trends, const std::string& file);
void plot_trends(const std::vector<PointTrend>& trends, const std::string& file);

// The same plots as SVG text, for a page (analysis/html_page.hpp): drawn into a temporary folder
// (under TMPDIR, else /tmp) that is removed again. RuntimeError as above, or when no temporary can
// be made.
std::string plot_rows_svg(const std::string& table, const std::vector<Record>& rows);
std::string plot_trends_svg(const std::vector<PointTrend>& trends);

}  // namespace hpcnn
