// hpcnn-summary: reads hpcnn result files and prints one table row per point.
//   hpcnn-summary [--format text|csv|markdown] [--columns a,b,c] FILE|DIR...
// Exit status: 0 all files read; 1 a file could not be read (the others are still summarized) or
// none was found; 2 bad command line. Needs no MPI.
#if __has_include(<config.h>)
#include <config.h>
#endif

#include <cstdio>
#include <string>
#include <vector>

#include "engine/errors.hpp"
#include "results/result_file.hpp"
#include "results/table.hpp"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

namespace {

using namespace hpcnn;

const char* const kProgram = "hpcnn-summary";
const char* const kDefaultColumns = "suite,model,backend,dataset,batch,threads,ranks,img_per_s";

struct Config {
  TableFormat format = TableFormat::Text;
  std::vector<std::string> columns = parse_columns(kDefaultColumns);
  std::vector<std::string> paths;
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
    {"--format", "text|csv|markdown", "table format (default: text)",
     [](Config& c, const std::string& v) {
       auto f = parse_table_format(v);
       if (!f) throw UsageError("--format: unknown format '" + v + "' (text, csv, markdown)");
       c.format = *f;
     }},
    {"--columns", "a,b,c", "fields to show, in order (default: see below)",
     [](Config& c, const std::string& v) { c.columns = parse_columns(v); }},
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
  std::printf("\nfields (for --columns; default %s):\n", kDefaultColumns);
  for (const Field& f : fields()) {
    std::string unit = *f.unit ? std::string(" [") + f.unit + "]" : std::string();
    std::printf("  %-16s %-6s %s%s\n", f.name, type_name(f.type), f.help, unit.c_str());
  }
  std::printf("\nexit status: 0 ok, 1 a file could not be read or none was found, 2 bad command line\n");
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

  std::vector<std::string> files = find_result_files(config.paths);
  if (files.empty()) {
    std::string where;
    for (const auto& p : config.paths) where += (where.empty() ? "" : ", ") + p;
    throw RuntimeError("no result files (*.h5) found in " + where);
  }

  std::vector<Record> records;
  std::size_t good = 0;
  int status = 0;
  for (const std::string& file : files) {
    try {
      ResultRun run = read_result_file(file);
      for (ResultPoint& point : run.points) records.push_back(std::move(point.record));
      ++good;
    } catch (const RuntimeError& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());  // names the file
      status = 1;
    }
  }
  if (good > 0) std::fputs(render_table(records, config.columns, config.format).c_str(), stdout);
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
