// Helpers for tests that need a GPU: they skip, visibly and with the reason, where none is usable.
#pragma once
#include <gtest/gtest.h>

#include "framework/core/cuda.h"

#define EMBER_SKIP_WITHOUT_GPU()                                                        \
  do {                                                                                  \
    if (!::ember::cuda_available())                                                     \
      GTEST_SKIP() << "no GPU (" << ::ember::cuda::unavailable_reason() << ")";         \
  } while (0)
