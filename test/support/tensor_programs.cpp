// The random tensor programs' interpreter at every element type the checks use, compiled once
// for all the test programs (see the extern declarations in tensor_programs.hpp).
#include "support/tensor_programs.hpp"

namespace adx_test::tensor_programs {
#define ADX_TEST_RUN(S) template S run<S>(tprogram const&, std::vector<tensor<S>> const&);
ADX_TEST_TENSOR_PROGRAM_TYPES(ADX_TEST_RUN)
#undef ADX_TEST_RUN
}  // namespace adx_test::tensor_programs
