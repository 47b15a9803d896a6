// adx rules: every elementwise function's value and partials.
#pragma once
#include "adx/rules/elementary.hpp"
