// Every io header: safetensors files, module save/load, training checkpoints.
#pragma once
#include "framework/io/checkpoint.h"
#include "framework/io/safetensors.h"
