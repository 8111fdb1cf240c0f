// A training checkpoint: named arrays of doubles, floats and integers, the settings they belong
// to, and a CRC-32 over everything, in one file written atomically (temporary name, fsync,
// rename, fsync of the folder: a previous checkpoint is never damaged). Reading checks the magic,
// the sizes and the checksum (RuntimeError naming the file) and the settings (UsageError: a
// checkpoint of other settings is refused in one line).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hpcnn {

class Checkpoint {
 public:
  void put(const std::string& name, std::vector<double> values) { doubles_[name] = std::move(values); }
  void put(const std::string& name, std::vector<float> values) { floats_[name] = std::move(values); }
  void put(const std::string& name, std::int64_t value) { ints_[name] = value; }
  // Throws RuntimeError naming the missing entry.
  const std::vector<double>& doubles(const std::string& name) const;
  const std::vector<float>& floats(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  bool has_integer(const std::string& name) const { return ints_.count(name) > 0; }

  void write(const std::string& path, const std::string& settings) const;
  // From the file's bytes (read by one rank, broadcast to the others); `path` names it in errors.
  static Checkpoint parse(const std::string& bytes, const std::string& path, const std::string& settings);

 private:
  std::map<std::string, std::vector<double>> doubles_;
  std::map<std::string, std::vector<float>> floats_;
  std::map<std::string, std::int64_t> ints_;
};

}  // namespace hpcnn
