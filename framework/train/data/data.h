// Every data header: datasets, the DataLoader, the IDX reader, Fashion-MNIST.
#pragma once
#include "framework/train/data/data_loader.h"
#include "framework/train/data/dataset.h"
#include "framework/train/data/fashion_mnist.h"
#include "framework/train/data/idx.h"
