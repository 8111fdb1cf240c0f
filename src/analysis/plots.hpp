// The plots of hpcnn-summary's tables (--plot): each table that has a plot names its writer in
// its preset (analysis/table_presets.cpp), and the writer adds the plot's gnuplot commands, data
// inline, to a script whose terminal and output file are already set. No MPI, no HDF5.
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "results/record.hpp"

namespace hpcnn {

// A gnuplot script under construction for some rows, and the helpers the writers share.
class PlotScript {
 public:
  using LabelOf = std::function<std::string(const Record&)>;
  using StyleOf = std::function<std::string(const Record&)>;

  PlotScript(const std::vector<Record>& rows, std::ostringstream& out) : rows(rows), out(out) {}

  // A curve's label: the values of `fields` a row has, space-separated.
  static LabelOf joined(std::vector<std::string> fields);
  // One curve per label and y field, points sorted by x; `style`: gnuplot line options of a
  // curve, from its first row. Throws RuntimeError when no row has x.
  void line_plot(const std::string& x, const std::vector<std::string>& ys, const LabelOf& label_of,
                 const StyleOf& style = nullptr);

  const std::vector<Record>& rows;
  std::ostringstream& out;

 private:
  int blocks_ = 0;  // inline data blocks so far ($d0, $d1, ...)
};

using PlotWriter = void (*)(PlotScript&);

// The writers, one per table that has a plot.
void plot_throughput(PlotScript& p);   // images/s against batch, a curve per suite/model/backend/...
void plot_scaling(PlotScript& p);      // images/s and efficiency against ranks or workers, linear lines
void plot_accuracy(PlotScript& p);     // test and training accuracy per epoch
void plot_convergence(PlotScript& p);  // test accuracy per epoch and against training time
void plot_breakdown(PlotScript& p);    // stacked phase times per point (per scheme and loading for E8)
void plot_allreduce(PlotScript& p);    // bus bandwidth against message size, a curve per scheme and rank count
void plot_ops(PlotScript& p);          // milliseconds per operator kind, a bar per profiled point

// A gnuplot double-quoted string; a line break becomes gnuplot's \n escape.
std::string gnuplot_quoted(const std::string& s);

}  // namespace hpcnn
