"""ember.nn.functional: torch.nn.functional's names and signatures over Ember's ops. Where Ember
differs, the function's docstring says how."""
import math

import numpy as np

from .. import _ember
from .._ember import Tensor, DType

_NEG_INF = float("-inf")


def _tensor_arg(x, name, what):
    if not isinstance(x, Tensor):
        raise TypeError(f"F.{what}: {name} must be an ember.Tensor, got {type(x).__name__}")


def _pair(v):
    """An int or a pair of ints as a list of two (torch's _pair)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return [int(v), int(v)]
    v = list(v)
    if len(v) == 1:
        return [int(v[0])] * 2
    if len(v) != 2 or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in v):
        raise ValueError(f"expected an int or a pair of ints, got {v!r}")
    return [int(v[0]), int(v[1])]


# ---- activations ----

def relu(input, inplace=False):
    return _ember.relu(input)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"F.gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _ember.gelu(input, approximate == "tanh")


def silu(input, inplace=False):
    return _ember.silu(input)


def tanh(input):
    return _ember.tanh(input)


def sigmoid(input):
    return _ember.sigmoid(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _ember.leaky_relu(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return _ember.elu(input, alpha)


def softplus(input, beta=1.0, threshold=20.0):
    return _ember.softplus(input, beta, threshold)


def _softmax_dim(input, dim, what):
    if dim is None:  # torch's implicit choice
        return 0 if input.ndim in (0, 1, 3) else 1
    return dim


def softmax(input, dim=None, dtype=None):
    x = input.to(dtype) if dtype is not None else input
    return _ember.softmax(x, _softmax_dim(x, dim, "softmax"))


def log_softmax(input, dim=None, dtype=None):
    x = input.to(dtype) if dtype is not None else input
    return _ember.log_softmax(x, _softmax_dim(x, dim, "log_softmax"))


# ---- linear, embedding, dropout ----

def linear(input, weight, bias=None):
    return _ember.linear(input, weight, bias)


def embedding(input, weight, padding_idx=None, max_norm=None):
    """weight[input]. padding_idx and max_norm are not supported (ValueError when given)."""
    if padding_idx is not None or max_norm is not None:
        raise ValueError("F.embedding: padding_idx and max_norm are not supported by Ember")
    _tensor_arg(input, "input", "embedding")
    return _ember.embedding(weight, input)


def dropout(input, p=0.5, training=True, inplace=False):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"F.dropout: p must be in [0, 1], got {p}")
    if p == 0.0 or not training:  # the identity: no copy (nanoGPT's default dropout is 0)
        return input
    return _ember.dropout(input, p, training)


# ---- normalisation ----

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalises over the trailing dims `normalized_shape`."""
    _tensor_arg(input, "input", "layer_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.ndim - k:]) != shape or k > input.ndim:
        raise ValueError(f"F.layer_norm: normalized_shape {shape} does not match the input's trailing dims "
                         f"{tuple(input.shape)}")
    n = int(math.prod(shape))
    x = input if k == 1 else input.reshape(list(input.shape[:input.ndim - k]) + [n])
    w = weight.reshape([n]) if weight is not None else _ember.ones([n], input.dtype, input.device)
    b = bias.reshape([n]) if bias is not None else _ember.zeros([n], input.dtype, input.device)
    y = _ember.layer_norm(x, w, b, eps)
    return y if k == 1 else y.reshape(list(input.shape))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalises dim 1 of (N, C, ...); in training the running statistics are updated in place."""
    return _ember.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _ember.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _ember.rms_norm(input, weight, 1e-6 if eps is None else eps)


# ---- convolution and pooling ----

def _conv_padding(padding, weight, dilation, stride, what):
    if isinstance(padding, str):
        if padding == "valid":
            return [0, 0]
        if padding == "same":
            if any(s != 1 for s in _pair(stride)):
                raise ValueError(f"F.{what}: padding='same' needs stride 1")
            k, d = list(weight.shape[2:]), _pair(dilation)
            if any((d[i] * (k[i] - 1)) % 2 for i in range(2)):
                raise ValueError(f"F.{what}: padding='same' with an even effective kernel is not supported")
            return [d[i] * (k[i] - 1) // 2 for i in range(2)]
        raise ValueError(f"F.{what}: padding must be ints, 'valid' or 'same', got {padding!r}")
    return _pair(padding)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    _tensor_arg(input, "input", "conv2d")
    _tensor_arg(weight, "weight", "conv2d")
    return _ember.conv2d(input, weight, bias, _pair(stride), _conv_padding(padding, weight, dilation, stride, "conv2d"),
                         _pair(dilation), groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _ember.conv1d(input, weight, bias, int(stride), int(padding), int(dilation), groups)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """ceil_mode and return_indices are not supported (ValueError when asked for)."""
    if ceil_mode or return_indices:
        raise ValueError("F.max_pool2d: ceil_mode and return_indices are not supported by Ember")
    stride = None if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _pair(stride)
    return _ember.max_pool2d(input, _pair(kernel_size), stride, _pair(padding), _pair(dilation))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Averages count the padding (torch's default count_include_pad=True); ceil_mode unsupported."""
    if ceil_mode or not count_include_pad:
        raise ValueError("F.avg_pool2d: ceil_mode and count_include_pad=False are not supported by Ember")
    stride = None if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _pair(stride)
    return _ember.avg_pool2d(input, _pair(kernel_size), stride, _pair(padding))


def adaptive_avg_pool2d(input, output_size):
    return _ember.adaptive_avg_pool2d(input, _pair(output_size))


def pad(input, pad, mode="constant", value=None):
    """Pads the last dims: pad = (left, right, top, bottom, ...); modes 'constant' and 'reflect'."""
    return _ember.pad(input, list(pad), mode, 0.0 if value is None else float(value))


# ---- attention ----

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q k^T * scale + mask) v over (..., L, E) queries and (..., S, E) keys and values.

    is_causal masks key j for query i when j > i (top-left aligned, as torch, also when L != S).
    attn_mask: a bool mask (True = take part) or a float mask added to the scores. Without a mask
    and dropout this runs Ember's fused attention kernel; with them, the composite formula."""
    for t, n in ((query, "query"), (key, "key"), (value, "value")):
        _tensor_arg(t, n, "scaled_dot_product_attention")
    if is_causal and attn_mask is not None:
        raise ValueError("F.scaled_dot_product_attention: give attn_mask or is_causal, not both")
    if enable_gqa:
        raise ValueError("F.scaled_dot_product_attention: enable_gqa is not supported by Ember")
    L, S = query.shape[-2], key.shape[-2]
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if attn_mask is None and dropout_p == 0.0 and (not is_causal or L == S) and \
            tuple(query.shape[:-2]) == tuple(key.shape[:-2]) == tuple(value.shape[:-2]):
        return _ember.attention(query, key, value, bool(is_causal), "auto", sc)
    scores = _ember.matmul(query, key.transpose(-2, -1)) * sc
    if is_causal:
        keep = _ember.tril(_ember.ones([L, S], DType.bool, query.device))
        scores = _ember.masked_fill(scores, _ember.logical_not(keep), _NEG_INF)
    elif attn_mask is not None:
        if attn_mask.dtype == DType.bool:
            scores = _ember.masked_fill(scores, _ember.logical_not(attn_mask), _NEG_INF)
        else:
            scores = scores + attn_mask
    p = _ember.softmax(scores, -1)
    if dropout_p > 0.0:
        p = _ember.dropout(p, dropout_p, True)
    return _ember.matmul(p, value)


# ---- losses ----

def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Class indices as targets (int64); per-class weight= and probability targets are not supported."""
    if weight is not None or size_average is not None or reduce is not None:
        raise ValueError("F.cross_entropy: weight, size_average and reduce are not supported by Ember")
    _tensor_arg(target, "target", "cross_entropy")
    if target.dtype != DType.int64:
        raise ValueError(f"F.cross_entropy: target must hold int64 class indices, got {target.dtype} "
                         "(probability targets are not supported)")
    if input.ndim > 2:  # (N, C, d1, ...) -> (N * d1 * ..., C), as torch's K-dimensional form
        c, out_shape = input.shape[1], list(target.shape)
        perm = [0] + list(range(2, input.ndim)) + [1]
        loss = _ember.cross_entropy(input.permute(perm).reshape([-1, c]), target.reshape([-1]), reduction,
                                    ignore_index, label_smoothing)
        return loss.reshape(out_shape) if reduction == "none" else loss
    return _ember.cross_entropy(input, target, reduction, ignore_index, label_smoothing)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    if weight is not None:
        raise ValueError("F.nll_loss: per-class weight is not supported by Ember")
    return _ember.nll_loss(input, target, reduction, ignore_index)


def mse_loss(input, target, reduction="mean"):
    return _ember.mse_loss(input, target, reduction)


def l1_loss(input, target, reduction="mean"):
    return _ember.l1_loss(input, target, reduction)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    return _ember.smooth_l1_loss(input, target, reduction, beta)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    if weight is not None:
        raise ValueError("F.binary_cross_entropy: weight is not supported by Ember")
    return _ember.binary_cross_entropy(input, target, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    if weight is not None or pos_weight is not None:
        raise ValueError("F.binary_cross_entropy_with_logits: weight and pos_weight are not supported by Ember")
    return _ember.binary_cross_entropy_with_logits(input, target, reduction)


def one_hot(tensor, num_classes=-1):
    return _ember.one_hot(tensor, num_classes)
