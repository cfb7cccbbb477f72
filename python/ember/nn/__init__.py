"""ember.nn: Module trees written in Python as in torch.nn (subclass Module, assign parameters,
buffers and modules as attributes), every layer of the C++ library under torch's name, and
ember.nn.functional / ember.nn.init / ember.nn.utils."""
from . import functional, init, utils  # noqa: F401
from .module import Module, Parameter  # noqa: F401
from .containers import Sequential, ModuleList, ModuleDict  # noqa: F401
from .layers import (  # noqa: F401
    Identity, Linear, Embedding, LayerNorm, RMSNorm, Dropout, Flatten, Conv1d, Conv2d, BatchNorm1d, BatchNorm2d,
    GroupNorm, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, ReLU, GELU, Tanh, Sigmoid, SiLU, LeakyReLU, ELU, Softplus,
    Softmax, LogSoftmax, CrossEntropyLoss, MSELoss, L1Loss, NLLLoss, BCELoss, BCEWithLogitsLoss, SmoothL1Loss,
)
