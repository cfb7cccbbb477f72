// The CUDA hooks' one definition: every declaration of ops/cuda_kernels.h, as a definition.
#define EMBER_CUDA_KERNELS_DEFINE
#include "ops/cuda_kernels.h"
