// hpcnn-summary: reads hpcnn result files and prints one table row per point (or per epoch, per
// operator, ... as the --table preset says), filtered (--where), sorted (--by), plotted (--plot)
// and compared with a baseline (--compare).
//   hpcnn-summary [--table NAME] [--format text|csv|markdown] [--columns a,b,c] [--where F=V,...]
//                 [--by F,...] [--plot FILE.png|svg] [--compare BASELINE --tolerance 5%] FILE|DIR...
// Exit status: 0 all files read (and no regression); 1 a file could not be read (the others are
// still summarized), none was found, a regression or a baseline run without a current one, or
// gnuplot missing/failing; 2 bad command line. Needs no MPI.
#if __has_include(<config.h>)
#include <config.h>
#endif

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "results/report.hpp"
#include "results/result_file.hpp"
#include "results/table.hpp"
#include "results/table_presets.hpp"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

namespace {

using namespace hpcnn;

const char* const kProgram = "hpcnn-summary";

struct Config {
  TableFormat format = TableFormat::Text;
  const TablePreset* table = &table_presets().front();
  std::vector<std::string> columns;  // empty: the table's default columns
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::string>> where;
  std::vector<std::string> by;
  std::string plot, compare, metric = "img_per_s";
  double tolerance = 0.05;
  bool help = false, version = false;
};

// The option table: drives parsing and --help.
struct Option {
  const char* name;  // "--format"
  const char* arg;   // value placeholder for --help; nullptr for a flag
  const char* help;
  void (*apply)(Config&, const std::string& value);
};

const Option kOptions[] = {
    {"--table", "NAME", "which table to print (default: the first listed below)",
     [](Config& c, const std::string& v) {
       c.table = find_table_preset(v);
       if (!c.table) {
         std::string names;
         for (const TablePreset& p : table_presets()) names += (names.empty() ? "" : ", ") + std::string(p.name);
         throw UsageError("--table: unknown table '" + v + "' (" + names + ")");
       }
     }},
    {"--format", "text|csv|markdown", "table format (default: text)",
     [](Config& c, const std::string& v) {
       auto f = parse_table_format(v);
       if (!f) throw UsageError("--format: unknown format '" + v + "' (text, csv, markdown)");
       c.format = *f;
     }},
    {"--columns", "a,b,c", "fields to show, in order (default: see below)",
     [](Config& c, const std::string& v) { c.columns = parse_columns(v); }},
    {"--where", "F=V,...", "only rows whose fields have these values (repeatable; all must hold)",
     [](Config& c, const std::string& v) {
       for (auto& cond : parse_where(v)) c.where.push_back(std::move(cond));
     }},
    {"--by", "F,...", "sort (and so group) the rows by these fields, in order",
     [](Config& c, const std::string& v) { c.by = parse_columns(v); }},
    {"--plot", "FILE.png|FILE.svg", "also draw the table with gnuplot (throughput, scaling, breakdown, accuracy)",
     [](Config& c, const std::string& v) {
       if (!v.ends_with(".png") && !v.ends_with(".svg")) throw UsageError("--plot: '" + v + "' must end in .png or .svg");
       c.plot = v;
     }},
    {"--compare", "BASELINE", "compare with the runs in BASELINE (file or directory); exit 1 on a regression",
     [](Config& c, const std::string& v) { c.compare = v; }},
    {"--tolerance", "PCT", "band of --compare, e.g. 5% (default 5%)",
     [](Config& c, const std::string& v) { c.tolerance = parse_tolerance(v); }},
    {"--metric", "FIELD", "figure --compare checks (default img_per_s; for times, unit s, lower is better)",
     [](Config& c, const std::string& v) {
       const Field* f = find_field(v);
       if (!f || f->type == FieldType::String) throw UsageError("--metric: '" + v + "' is not a numeric field");
       c.metric = v;
     }},
    {"--help", nullptr, "print this help and the available fields, then exit", [](Config& c, const std::string&) { c.help = true; }},
    {"--version", nullptr, "print the version, then exit", [](Config& c, const std::string&) { c.version = true; }},
};

// --name VALUE, --name=VALUE, flags; "--" ends the options; everything else is a FILE or DIR.
Config parse_command_line(int argc, char** argv) {
  Config config;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      config.paths.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    std::string name = arg, value;
    bool has_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    const Option* option = nullptr;
    for (const Option& o : kOptions)
      if (name == o.name) option = &o;
    if (!option) throw UsageError("unknown option '" + name + "' (see --help)");
    if (option->arg && !has_value) {
      if (i + 1 >= argc) throw UsageError(name + " needs a value (" + option->arg + ")");
      value = argv[++i];
    } else if (!option->arg && has_value) {
      throw UsageError(name + " takes no value");
    }
    option->apply(config, value);
  }
  return config;
}

void print_help() {
  std::printf("usage: %s [options] FILE|DIR...\n", kProgram);
  std::printf("Prints one table row per point of every hpcnn result file given, or found (*.h5) under DIR.\n\n");
  std::printf("options:\n");
  for (const Option& o : kOptions) {
    std::string left = std::string(o.name) + (o.arg ? std::string(" ") + o.arg : std::string());
    std::printf("  %-30s %s\n", left.c_str(), o.help);
  }
  std::printf("\ntables (for --table; the first is the default):\n");
  for (const TablePreset& p : table_presets()) {
    std::printf("  %-16s %s\n", p.name, p.help);
    std::printf("  %-16s columns: %s\n", "", p.columns);
  }
  std::printf("\nfields (for --columns):\n");
  for (const Field& f : fields()) {
    std::string unit = *f.unit ? std::string(" [") + f.unit + "]" : std::string();
    std::printf("  %-16s %-6s %s%s\n", f.name, type_name(f.type), f.help, unit.c_str());
  }
  std::printf("\nexit status: 0 ok, 1 a file could not be read or none was found, 2 bad command line\n");
}

// The preset's rows of every file under `paths`, filtered and sorted as asked. A file that cannot
// be read gets one line on stderr (naming it) and status 1; the others are still read.
std::vector<Record> read_rows(const Config& config, const std::vector<std::string>& paths, std::size_t& good,
                              int& status) {
  std::vector<std::string> files = find_result_files(paths);
  if (files.empty()) {
    std::string where;
    for (const auto& p : paths) where += (where.empty() ? "" : ", ") + p;
    throw RuntimeError("no result files (*.h5) found in " + where);
  }
  std::vector<Record> records;
  for (const std::string& file : files) {
    try {
      ResultRun run = read_result_file(file);
      for (Record& row : preset_rows(*config.table, run))
        if (row_matches(row, config.where)) records.push_back(std::move(row));
      ++good;
    } catch (const RuntimeError& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());  // names the file
      status = 1;
    }
  }
  sort_rows(records, config.by);
  return records;
}

int run(int argc, char** argv) {
  Config config = parse_command_line(argc, argv);
  if (config.help) {
    print_help();
    return 0;
  }
  if (config.version) {
    std::printf("%s %s (result schema version %d)\n", kProgram, PACKAGE_VERSION, kSchemaVersion);
    return 0;
  }
  if (config.paths.empty()) throw UsageError("no FILE or DIR given (see --help)");

  int status = 0;
  std::size_t good = 0;
  std::vector<Record> records = read_rows(config, config.paths, good, status);
  std::vector<std::string> columns = config.columns.empty() ? parse_columns(config.table->columns) : config.columns;
  if (good > 0) std::fputs(render_table(records, columns, config.format).c_str(), stdout);
  if (!config.plot.empty() && good > 0) {
    std::fflush(stdout);
    try {
      plot_rows(config.table->name, records, config.plot);
      std::fprintf(stderr, "%s: plot written to %s\n", kProgram, config.plot.c_str());
    } catch (const RuntimeError& e) {
      std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());
      status = 1;
    }
  }
  if (!config.compare.empty()) {
    std::size_t base_good = 0;
    int base_status = 0;
    const std::vector<Record> baseline = read_rows(config, {config.compare}, base_good, base_status);
    status = std::max(status, base_status);
    const bool higher_is_better = std::string(find_field(config.metric)->unit) != "s";  // times: lower is better
    const Comparison c = compare_rows(baseline, records, config.metric, higher_is_better, config.tolerance);
    std::fflush(stdout);
    for (const std::string& line : c.regressions) std::printf("regression: %s\n", line.c_str());
    for (const std::string& line : c.missing) std::printf("no current run for baseline: %s\n", line.c_str());
    for (const std::string& line : c.unmatched) std::printf("not in baseline: %s\n", line.c_str());
    std::printf("compare: %d matched, %zu regressions beyond %.1f%% (%s), %zu baseline runs without a current one\n",
                c.compared, c.regressions.size(), 100.0 * config.tolerance, config.metric.c_str(), c.missing.size());
    if (!c.regressions.empty() || !c.missing.empty() || c.compared == 0) status = 1;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());
    return 2;
  } catch (const RuntimeError& e) {
    std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: internal: %s\n", kProgram, e.what());
    return 1;
  }
}
