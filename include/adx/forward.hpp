// adx forward mode: dual<T>.
#pragma once
#include "adx/forward/dual.hpp"
