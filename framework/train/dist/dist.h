// Data-parallel training across processes: the communicator and what is built on it.
#pragma once
#include "framework/train/dist/backend.h"
#include "framework/train/dist/communicator.h"
#include "framework/train/dist/data_parallel.h"
#include "framework/train/dist/file_rendezvous.h"
#include "framework/train/dist/sharded_sampler.h"
