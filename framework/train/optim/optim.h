// Every optim header: SGD, Adam, AdamW, parameter groups, learning-rate schedules, gradient clipping.
#pragma once
#include "framework/train/optim/adam.h"
#include "framework/train/optim/clip_grad.h"
#include "framework/train/optim/lr_schedule.h"
#include "framework/train/optim/optimizer.h"
#include "framework/train/optim/param_group.h"
#include "framework/train/optim/sgd.h"
