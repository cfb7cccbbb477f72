"""Ember from Python: tensors that share memory with NumPy, reverse- and forward-mode autodiff
(make_vjp, grad, value_and_grad, make_jvp, backward), every op of the C++ op table, custom ops with
Python rules, gradcheck, nn layers, optimizers, safetensors, Fashion-MNIST, CUDA tensors (where
the CUDA backend and a GPU exist) and GPT-2 from Hugging Face folders (ember.models).

The C++ core is ember._ember (nanobind); this package adds the Pythonic spellings on top of it,
with PyTorch's names and semantics where Ember has the op (python/README.md, "From PyTorch").
"""
from . import _ember
from ._ember import (  # noqa: F401  (the public C++ surface, re-exported)
    Error, DType, Device, Tensor, VjpFunction, GradcheckResult,
    zeros, ones, empty, full, zeros_like, ones_like, full_like, scalar, arange,
    manual_seed, rand, randn, uniform, randint, memory_stats,
    add, sub, mul, div, pow, maximum, minimum, gt, ge, lt, le, eq, ne, where, masked_fill, cast,
    logical_and, logical_or, logical_xor, logical_not, any, all,
    neg, exp, log, sin, cos, tanh, sigmoid, relu, gelu, sqrt, erf, abs, square,
    sign, log1p, expm1, silu, clamp, leaky_relu, elu, softplus,
    sum, mean, max, argmax, min, argmin, prod, var, std, norm, sum_to, cumsum, cumsum_reverse,
    matmul, linear, softmax, log_softmax, logsumexp, layer_norm, cross_entropy, embedding, dropout,
    mse_loss, l1_loss, smooth_l1_loss, nll_loss, binary_cross_entropy, binary_cross_entropy_with_logits,
    gather, scatter_add, index_select, one_hot, nonzero, flip, roll, repeat, tril, triu, pad, eye, linspace,
    einsum,
    attention, reshape, view, transpose, permute, slice, expand, unsqueeze, squeeze, copy, concat,
    stack, split, topk, sort, embedding_backward, slice_backward,
    conv2d, conv1d, conv2d_input_grad, conv2d_weight_grad, max_pool2d, avg_pool2d, adaptive_avg_pool2d,
    batch_norm, group_norm, rms_norm,
    registered_ops, custom_op_names, grad_enabled,
    save_file, load_file, load_file_metadata, save_npy, load_npy, cuda_available,
    register_study_kernels,
)
from ._tensor import tensor, from_numpy, from_dlpack, as_device, with_device_names as _with_device_names  # noqa: F401
from .autograd import (make_vjp, make_jvp, grad, value_and_grad, no_grad, enable_grad, set_grad_enabled,  # noqa: F401
                       inference_mode, is_grad_enabled, autodiff_trace, checkpoint)
from .custom_op import CustomOp, custom_op, gradcheck  # noqa: F401
from ._autocast import autocast, is_autocast_enabled, get_autocast_dtype  # noqa: F401
from ._ember import autocast_lower_precision_ops, autocast_float32_ops  # noqa: F401
from . import _tensor as _tensor_module, _torch_tensor, _factories
from ._torch_tensor import (max, min, argmax, argmin, topk, sort, flatten, cat, chunk, split, stack,  # noqa: F401,A004
                            floor_divide, remainder, isnan, isinf, isfinite, allclose, isclose, equal)
from .random import Generator, rand, randn, uniform, randint, bernoulli, multinomial  # noqa: F401
from .serialization import save, load  # noqa: F401
from . import nn, optim, data, cuda, models  # noqa: F401

_torch_tensor.patch(_tensor_module._getitem, _tensor_module._setitem)
# sizes as one int or a pair (max_pool2d(x, 2)), as torch, for the functions and the methods
conv2d = nn.functional.conv2d
max_pool2d = nn.functional.max_pool2d
avg_pool2d = nn.functional.avg_pool2d
adaptive_avg_pool2d = nn.functional.adaptive_avg_pool2d
for _f in (conv2d, max_pool2d, avg_pool2d, adaptive_avg_pool2d):
    setattr(Tensor, _f.__name__, _f)
del _f

# sizes as ints or a sequence, dtype and device by position or keyword, requires_grad= (as torch);
# device="cuda" as well as device=ember.Device.cuda
zeros = _factories.make_shaped(zeros, "zeros")
ones = _factories.make_shaped(ones, "ones")
empty = _factories.make_shaped(empty, "empty")
full = _factories.make_shaped(full, "full", n_values=1)
zeros_like = _factories.make_like(zeros_like, "zeros_like")
ones_like = _factories.make_like(ones_like, "ones_like")
full_like = _factories.make_like(full_like, "full_like", n_values=1)
arange = _factories.arange
scalar = _with_device_names(scalar, 2)
concatenate = cat

float32 = DType.float32
float64 = DType.float64
int64 = DType.int64
bfloat16 = DType.bfloat16
float16 = DType.float16
half = DType.float16
float = DType.float32  # noqa: A001  (torch.float; the builtin is not used below)
double = DType.float64
long = DType.int64
bool = DType.bool  # noqa: A001  (ember.bool, as torch.bool; the builtin is not used below)
cpu = Device.cpu

# Primitives of the op table that have no Python function of their own, and why. test_ops.py
# fails when a primitive is neither bound under its name nor listed here.
_INTERNAL_OPS = {
    "gelu_tanh": "ember.gelu(x, tanh_approximation=True)",
    "spmm": "sparse CSR tensors are not bound yet",
    "sampled_dot": "sparse CSR tensors are not bound yet",
}

__version__ = "0.1.0"
