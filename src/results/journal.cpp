#include "results/journal.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/durable_file.hpp"
#include "base/errors.hpp"

namespace hpcnn {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRunFile = "run.txt";
constexpr const char* kMagic = "hpcnn-journal 1";

std::string point_stem(std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "point-%06zu", index);
  return name;
}

// run.txt: the magic line, "start ISO" lines, then "setting NAME=VALUE" lines.
void parse_run_file(const std::string& path, std::vector<std::string>& starts, Settings& settings) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line) || line != kMagic) throw RuntimeError(path + ": not an hpcnn run journal");
  while (std::getline(in, line)) {
    if (line.rfind("start ", 0) == 0) starts.push_back(line.substr(6));
    else if (line.rfind("setting ", 0) == 0) {
      const std::size_t eq = line.find('=');
      if (eq == std::string::npos) throw RuntimeError(path + ": damaged line '" + line + "'");
      settings.emplace_back(line.substr(8, eq - 8), line.substr(eq + 1));
    }
  }
}

std::string setting_of(const Settings& settings, const std::string& name) {
  for (const auto& [k, v] : settings)
    if (k == name) return v;
  return "(not set)";
}

}  // namespace

Journal::Journal(const std::string& dir, const std::string& stem)
    : dir_(dir.empty() ? "." : dir), path_((fs::path(dir_) / ("." + stem + ".journal")).string()) {}

bool Journal::exists() const { return fs::exists(fs::path(path_) / kRunFile); }

void Journal::write_run_file(const Settings& settings) {
  std::ostringstream os;
  os << kMagic << "\n";
  for (const std::string& s : starts_) os << "start " << s << "\n";
  for (const auto& [k, v] : settings) os << "setting " << k << "=" << v << "\n";
  write_file_durably((fs::path(path_) / kRunFile).string(), os.str(), "the run journal");
}

void Journal::start(const Settings& settings, const std::string& run_start) {
  std::error_code ec;
  fs::remove_all(path_, ec);
  fs::create_directories(path_, ec);
  if (ec) throw RuntimeError(path_ + ": cannot create the run journal: " + ec.message());
  sync_path(dir_);
  starts_ = {run_start};
  completed_.clear();
  added_ = 0;
  try {
    write_run_file(settings);
  } catch (...) {
    fs::remove_all(path_, ec);  // a journal without its run file is nothing to resume
    throw;
  }
}

void Journal::resume(const Settings& settings, const std::string& run_start) {
  Settings before;
  starts_.clear();
  parse_run_file((fs::path(path_) / kRunFile).string(), starts_, before);
  for (const auto& [k, v] : settings)
    if (setting_of(before, k) != v)
      throw UsageError("--resume: " + path_ + " was made with --" + k + " " + setting_of(before, k) + ", not " + v);
  for (const auto& [k, v] : before)
    if (setting_of(settings, k) == "(not set)")
      throw UsageError("--resume: " + path_ + " was made with --" + k + " " + v + ", which this command does not give");
  for (const auto& entry : fs::directory_iterator(path_)) {
    const std::string name = entry.path().filename().string();
    std::size_t index = 0;
    if (std::sscanf(name.c_str(), "point-%zu.h5", &index) != 1 || name != point_stem(index) + ".h5") continue;
    ResultRun run = read_result_file(entry.path().string());
    if (run.points.size() != 1) throw RuntimeError(entry.path().string() + ": not a journal point");
    completed_[index] = std::move(run.points.front());
  }
  starts_.push_back(run_start);
  write_run_file(settings);
}

void Journal::add(std::size_t index, const ResultPoint& point) {
  ResultWriter writer(path_, ResultWriter::Named{point_stem(index), true});
  writer.add_point(point);
  Provenance p;
  p.suite = point.record.text("suite");
  writer.commit(p);
  ++added_;
}

void Journal::remove() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace hpcnn
