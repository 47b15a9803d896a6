// SPDX-License-Identifier: MIT
// adx: undefines the macros of entry_macros.hpp. A rule header includes it after its entry
// points, so that the macros never reach its includers; one list, beside the definitions'.
#undef ADX_UNARY_ENTRY_FOR
#undef ADX_UNARY_ENTRY
#undef ADX_UNCONNECTED_UNARY_ENTRY
#undef ADX_OWN_UNARY_ENTRY
#undef ADX_BINARY_ENTRY
#undef ADX_OWN_BINARY_ENTRY
