// docs/tutorial.md shows the programs of examples/tutorial/, which the examples' build compiles
// and ctest runs (each checks its own results). This keeps the page and the programs the same:
// every ```cpp block of the page names its file on its first line and is that file, character
// for character, and every program of the directory is on the page, in the order of its name.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/files.hpp"

using adx_test::read_all;

namespace {

struct code_block {
  std::string file;  ///< the path its first line names
  std::string text;  ///< its lines, each ending in a newline
};

/// The ```cpp blocks of a markdown page.
std::vector<code_block> cpp_blocks(std::string const& page) {
  std::vector<code_block> blocks;
  std::istringstream in(page);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!inside && line == "```cpp") {
      inside = true;
      blocks.emplace_back();
    } else if (inside && line == "```") {
      inside = false;
    } else if (inside) {
      code_block& b = blocks.back();
      if (b.text.empty() && line.starts_with("// ")) b.file = line.substr(3, line.find(':') - 3);
      b.text += line + "\n";
    }
  }
  CHECK_MESSAGE(!inside, "a ```cpp block is not closed");
  return blocks;
}

}  // namespace

TEST_CASE("docs/tutorial.md: its programs are examples/tutorial/, as they are") {
  std::filesystem::path const root = ADX_SOURCE_DIR;
  auto const blocks = cpp_blocks(read_all(root / "docs" / "tutorial.md"));
  std::vector<std::string> files;
  for (auto const& entry : std::filesystem::directory_iterator(root / "examples" / "tutorial"))
    if (entry.path().extension() == ".cpp") files.push_back("examples/tutorial/" + entry.path().filename().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 7);
  REQUIRE(blocks.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("step " << i + 1 << ": " << files[i]);
    CHECK(blocks[i].file == files[i]);
    CHECK_MESSAGE(blocks[i].text == read_all(root / files[i]),
                  "the block differs from the file: run scripts/sync_tutorial.py");
  }
}

TEST_CASE("docs: every page with C++ examples is checked by test/docs") {
  // test_readme.cpp runs the README's, the guide's and the reliability page's examples; this file
  // keeps the tutorial's. A ```cpp block on any other page would be checked by neither.
  std::filesystem::path const root = ADX_SOURCE_DIR;
  std::vector<std::string> const checked{"README.md", "docs/guide.md", "docs/reliability.md", "docs/tutorial.md"};
  std::vector<std::filesystem::path> pages{root / "README.md", root / "examples" / "README.md"};
  for (auto const& entry : std::filesystem::directory_iterator(root / "docs"))
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  for (auto const& page : pages) {
    std::string const name = std::filesystem::relative(page, root).generic_string();
    if (std::find(checked.begin(), checked.end(), name) != checked.end()) continue;
    INFO(name);
    CHECK_MESSAGE(cpp_blocks(read_all(page)).empty(),
                  "this page has ```cpp examples that no test runs: add it to test/docs/test_readme.cpp");
  }
}

TEST_CASE("docs/examples.dox lists every example program, so that the API reference shows it") {
  std::filesystem::path const root = ADX_SOURCE_DIR;
  std::string const listed = read_all(root / "docs" / "examples.dox");
  std::size_t programs = 0;
  for (auto const& entry : std::filesystem::recursive_directory_iterator(root / "examples")) {
    if (entry.path().extension() != ".cpp") continue;
    std::string const name = std::filesystem::relative(entry.path(), root / "examples").generic_string();
    INFO(name);
    CHECK(listed.find("\\example " + name + "\n") != std::string::npos);
    ++programs;
  }
  CHECK(programs >= 11);
}
