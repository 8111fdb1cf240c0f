// Helpers shared by the fuzz targets (fuzz/*_target.cpp).
//
// InputFile: most readers take a path, not bytes. It puts the bytes in a fresh anonymous in-memory
// file (memfd; a private temporary file where memfd is unavailable) and names it by a path the
// reader can open. Fresh per input, so no reader (libhdf5 identifies open files by inode) can
// mistake one input for the one before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hpcnn::fuzz {

class InputFile {
 public:
  InputFile(const std::uint8_t* data, std::size_t size);
  InputFile(std::string_view bytes) : InputFile(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()) {}
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  std::string unlink_path_;  // the temporary file's own name when memfd was unavailable
};

// A property every successful read must have; when it does not, stops the process (abort: a
// finding, reported like a crash) with a message naming it.
void expect(bool holds, const char* property);

// Stops the process with a message naming `what`: the harness itself failed (no file could be
// made), which is not a finding about the code under test.
[[noreturn]] void harness_failure(const std::string& what);

}  // namespace hpcnn::fuzz
