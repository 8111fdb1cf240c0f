// Named tables for hpcnn-summary (--table NAME): which columns to show and, optionally, how one
// result point becomes several rows (one per operator, per epoch, ...). ONE table of presets in
// table_presets.cpp; adding a table is one entry there (plus any fields it needs in fields.cpp).
#pragma once

#include <string>
#include <vector>

#include "analysis/plots.hpp"
#include "results/record.hpp"
#include "results/result_file.hpp"

namespace hpcnn {

// Turns one point of a run into table rows. A row is a Record, so every column it sets must be a
// field in fields.cpp. Rows usually start as a copy of point.record (so --where/--by on settings
// keep working) and add the per-row fields.
using RowExpander = std::vector<Record> (*)(const ResultRun& run, const ResultPoint& point);

struct TablePreset {
  const char* name;     // "throughput"
  const char* columns;  // default columns, "a,b,c" (fields.cpp names); --columns overrides
  const char* help;     // one line for --help
  RowExpander rows;     // nullptr: one row per point, the point's record as it is
  PlotWriter plot;      // --plot of this table (analysis/plots.hpp); nullptr: the table has none
};

const std::vector<TablePreset>& table_presets();  // in --help order; the first is the default
const TablePreset* find_table_preset(const std::string& name);  // nullptr when unknown

// The table that shows what a run holds (hpcnn-summary without --table or --columns): the one its
// suite declared in the file (provenance default_table), else, for files written before suites
// declared it, the table that suite declares.
const TablePreset& preset_for(const ResultRun& run);

// Rows of a preset for a run: its expander's rows, or the records of the points.
std::vector<Record> preset_rows(const TablePreset& preset, const ResultRun& run);

}  // namespace hpcnn
