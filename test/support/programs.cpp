// The random scalar programs' interpreter at every scalar type the checks use, compiled once
// for all the test programs (see the extern declarations in programs.hpp).
#include "support/programs.hpp"

namespace adx_test::programs {
#define ADX_TEST_RUN(S) template S run<S>(program const&, std::vector<S> const&);
ADX_TEST_PROGRAM_TYPES(ADX_TEST_RUN)
#undef ADX_TEST_RUN
}  // namespace adx_test::programs
