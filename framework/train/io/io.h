// Every io header: safetensors files, module save/load, training checkpoints.
#pragma once
#include "framework/train/io/checkpoint.h"
#include "framework/train/io/safetensors.h"
