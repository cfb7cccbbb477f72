// Every nn header: modules, layers, initialisation, the MLP builder.
#pragma once
#include "framework/nn/activation.h"
#include "framework/nn/dropout.h"
#include "framework/nn/embedding.h"
#include "framework/nn/init.h"
#include "framework/nn/layer_norm.h"
#include "framework/nn/linear.h"
#include "framework/nn/mlp.h"
#include "framework/nn/module.h"
#include "framework/nn/sequential.h"
