// Every optim header: SGD, Adam, AdamW, learning-rate schedules, gradient clipping.
#pragma once
#include "framework/optim/adam.h"
#include "framework/optim/clip_grad.h"
#include "framework/optim/lr_schedule.h"
#include "framework/optim/optimizer.h"
#include "framework/optim/sgd.h"
