// Test support: a file read whole (the docs tests' pages and programs, the rule headers).
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace adx_test {

/// The whole text of file; fails the test case if it cannot be opened.
inline std::string read_all(std::filesystem::path const& file) {
  std::ifstream in(file);
  REQUIRE_MESSAGE(in.good(), "cannot open " << file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace adx_test
