// Ember: one include for the whole public API.
#pragma once
#include "framework/autograd/autograd.h"
#include "framework/error.h"
#include "framework/gradcheck.h"
#include "framework/tensor.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/matmul.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_ops.h"
