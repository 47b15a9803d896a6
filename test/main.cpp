// The doctest main of every test program, with one guard: ctest runs each test case by its name
// (doctest_discover_tests), and a name that does not reach the program whole selects no test
// case, which doctest counts as a pass. (CMake splits a name at ';': ten test cases never ran
// under ctest, and one of them had a wrong expectation.) So a run given a test-case filter that
// selects nothing fails, naming the filter.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

namespace {

/// Notes how many test cases passed the filters in the run.
struct selected_counter : doctest::IReporter {
  static inline int selected = -1;  // -1: no run (a query such as --list-test-cases)
  explicit selected_counter(doctest::ContextOptions const&) {}
  void report_query(doctest::QueryData const&) override {}
  void test_run_start() override {}
  void test_run_end(doctest::TestRunStats const& s) override {
    selected = static_cast<int>(s.numTestCasesPassingFilters);
  }
  void test_case_start(doctest::TestCaseData const&) override {}
  void test_case_reenter(doctest::TestCaseData const&) override {}
  void test_case_end(doctest::CurrentTestCaseStats const&) override {}
  void test_case_exception(doctest::TestCaseException const&) override {}
  void subcase_start(doctest::SubcaseSignature const&) override {}
  void subcase_end() override {}
  void log_assert(doctest::AssertData const&) override {}
  void log_message(doctest::MessageData const&) override {}
  void test_case_skipped(doctest::TestCaseData const&) override {}
};

}  // namespace

REGISTER_LISTENER("adx_selected_counter", 1, selected_counter);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  int const result = context.run();
  if (context.shouldExit()) return result;
  for (int i = 1; i < argc; ++i) {
    std::string_view const a(argv[i]);
    bool const by_name = a.substr(0, 12) == "--test-case=" || a.substr(0, 4) == "-tc=";
    if (by_name && selected_counter::selected == 0) {
      std::fprintf(stderr, "adx tests: the filter %s selects no test case (a name with ';' is cut there by CMake)\n",
                   argv[i]);
      return result == 0 ? 1 : result;
    }
  }
  return result;
}
