// Every data header: datasets, the DataLoader, the IDX reader, Fashion-MNIST.
#pragma once
#include "framework/data/data_loader.h"
#include "framework/data/dataset.h"
#include "framework/data/fashion_mnist.h"
#include "framework/data/idx.h"
