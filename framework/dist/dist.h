// Data-parallel training across processes: the communicator and what is built on it.
#pragma once
#include "framework/dist/backend.h"
#include "framework/dist/communicator.h"
#include "framework/dist/data_parallel.h"
#include "framework/dist/file_rendezvous.h"
#include "framework/dist/sharded_sampler.h"
