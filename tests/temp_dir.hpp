// A fresh temporary directory for a test, removed with its content at the end
// (also when the test fails).
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdlib.h>
#include <string>

namespace jp::testing {

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    char tmpl[] = "/tmp/jp-actors-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  bool has(const std::string& name) const { return std::filesystem::exists(path / name); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
  /// What `name` holds ("" if it is not there).
  std::string read(const std::string& name) const {
    std::ifstream in(path / name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
};

} // namespace jp::testing
