"""The layers with torch's names and constructor arguments. Weights start as torch's defaults
do, drawn from the global generator (ember.manual_seed) unless a layer is given seed=, which
reproduces the C++ layer of that seed exactly."""
import math

from .. import _ember
from .._ember import DType
from . import functional as F
from . import init
from .module import Module


def _global_seed():
    """A seed drawn from the global generator, so that each layer built after ember.manual_seed(s)
    gets its own reproducible weights."""
    return int(_ember.randint(0, 2 ** 62, [1]).item())


def _check_dtype(dtype, what):
    if dtype not in (DType.float32, DType.float64):
        raise ValueError(f"nn.{what}: dtype must be ember.float32 or ember.float64, got {dtype}")


def _positive(v, name, what):
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"nn.{what}: {name} must be a positive int, got {v!r}")


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class Linear(Module):
    """y = x W^T + b. init: "default" (torch's), "kaiming" or "xavier", as the C++ nn::Linear.
    seed: None draws from the global generator; an int gives the C++ layer's weights of that seed."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=DType.float32, init="default",
                 seed=None):
        super().__init__()
        _check_dtype(dtype, "Linear")
        self.in_features, self.out_features = in_features, out_features
        w, b = _ember._linear_init(in_features, out_features, _global_seed() if seed is None else seed, init, dtype,
                                   bool(bias))
        self.register_parameter("weight", w)
        self.register_parameter("bias", b)
        if device is not None:
            self.to(device)

    def forward(self, x):
        return _ember.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table, N(0, 1) at the start as torch's (stddev= changes that)."""

    def __init__(self, num_embeddings, embedding_dim, device=None, dtype=DType.float32, stddev=1.0, seed=None):
        super().__init__()
        _check_dtype(dtype, "Embedding")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.register_parameter("weight", _ember._embedding_init(
            num_embeddings, embedding_dim, _global_seed() if seed is None else seed, stddev, dtype))
        if device is not None:
            self.to(device)

    @property
    def dim(self):
        return self.embedding_dim

    def forward(self, ids):
        return F.embedding(ids, self.weight)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None,
                 dtype=DType.float32):
        super().__init__()
        _check_dtype(dtype, "LayerNorm")
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.register_parameter("weight", _ember.ones(list(shape), dtype) if elementwise_affine else None)
        self.register_parameter("bias", _ember.zeros(list(shape), dtype) if elementwise_affine and bias else None)
        if device is not None:
            self.to(device)

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=1e-6, elementwise_affine=True, dtype=DType.float32):
        super().__init__()
        n = normalized_shape if isinstance(normalized_shape, int) else int(math.prod(normalized_shape))
        self.eps = eps
        self.register_parameter("weight", _ember.ones([n], dtype) if elementwise_affine else None)

    def forward(self, x):
        return _ember.rms_norm(x, self.weight, self.eps)


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"nn.Dropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        from .._torch_tensor import flatten
        return flatten(x, self.start_dim, self.end_dim)


class _ConvNd(Module):
    def _init_weights(self, shape, fan_in, bias, dtype, device):
        bound = 1.0 / math.sqrt(fan_in)
        w = _ember.empty(shape, dtype)
        self.register_parameter("weight", init.uniform_(w, -bound, bound))
        self.register_parameter("bias", init.uniform_(_ember.empty([shape[0]], dtype), -bound, bound) if bias else None)
        if device is not None:
            self.to(device)


class Conv2d(_ConvNd):
    """2-D convolution of (N, C, H, W) inputs; padding as ints, 'valid' or 'same'; zero padding only."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=DType.float32):
        super().__init__()
        for v, n in ((in_channels, "in_channels"), (out_channels, "out_channels"), (groups, "groups")):
            _positive(v, n, "Conv2d")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"nn.Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        if padding_mode != "zeros":
            raise ValueError(f"nn.Conv2d: only padding_mode='zeros' exists in Ember, got {padding_mode!r}")
        _check_dtype(dtype, "Conv2d")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = F._pair(kernel_size), F._pair(stride), F._pair(dilation)
        self.padding = padding if isinstance(padding, str) else F._pair(padding)
        k = self.kernel_size
        self._init_weights([out_channels, in_channels // groups, k[0], k[1]], in_channels // groups * k[0] * k[1],
                           bias, dtype, device)

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class Conv1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 device=None, dtype=DType.float32):
        super().__init__()
        for v, n in ((in_channels, "in_channels"), (out_channels, "out_channels"), (kernel_size, "kernel_size")):
            _positive(v, n, "Conv1d")
        _check_dtype(dtype, "Conv1d")
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self._init_weights([out_channels, in_channels // groups, kernel_size], in_channels // groups * kernel_size,
                           bias, dtype, device)

    def forward(self, x):
        return F.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _BatchNorm(Module):
    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=DType.float32):
        super().__init__()
        _positive(num_features, "num_features", type(self).__name__)
        if momentum is None:
            raise ValueError(f"nn.{type(self).__name__}: momentum=None (a cumulative average) is not supported")
        _check_dtype(dtype, type(self).__name__)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.register_parameter("weight", _ember.ones([num_features], dtype) if affine else None)
        self.register_parameter("bias", _ember.zeros([num_features], dtype) if affine else None)
        if track_running_stats:
            self.register_buffer("running_mean", _ember.zeros([num_features], dtype))
            self.register_buffer("running_var", _ember.ones([num_features], dtype))
            self.register_buffer("num_batches_tracked", _ember.zeros([], DType.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        if device is not None:
            self.to(device)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1.0)
            self.num_batches_tracked.zero_()

    def forward(self, x):
        if x.ndim not in self._dims:
            raise ValueError(f"nn.{type(self).__name__}: expected a {' or '.join(map(str, self._dims))}-D input, "
                             f"got shape {tuple(x.shape)}")
        use_batch = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1.0)
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_batch, self.momentum,
                            self.eps)

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"


class BatchNorm1d(_BatchNorm):
    """Batch norm of (N, C) or (N, C, L) inputs; running statistics are buffers (in state_dict)."""
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm of (N, C, H, W) inputs; running statistics are buffers (in state_dict)."""
    _dims = (4,)


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=DType.float32):
        super().__init__()
        _positive(num_groups, "num_groups", "GroupNorm")
        _positive(num_channels, "num_channels", "GroupNorm")
        if num_channels % num_groups:
            raise ValueError(f"nn.GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.register_parameter("weight", _ember.ones([num_channels], dtype) if affine else None)
        self.register_parameter("bias", _ember.zeros([num_channels], dtype) if affine else None)

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        if return_indices or ceil_mode:
            raise ValueError("nn.MaxPool2d: return_indices and ceil_mode are not supported by Ember")
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self.output_size)


def _activation(name, fn, doc, **defaults):
    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        names = list(defaults)
        if len(args) > len(names):
            raise TypeError(f"nn.{name}: expected at most {len(names)} positional arguments, got {len(args)}")
        opts = dict(defaults)
        opts.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in opts and k != "inplace":
                raise TypeError(f"nn.{name}: unexpected keyword argument '{k}'")
            if k != "inplace":
                opts[k] = v
        object.__setattr__(self, "_opts", opts)

    def forward(self, x):
        return fn(x, **self._opts)

    def extra_repr(self):
        return ", ".join(f"{k}={v!r}" for k, v in self._opts.items())

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                  "__doc__": doc})


ReLU = _activation("ReLU", F.relu, "max(x, 0)")
GELU = _activation("GELU", F.gelu, "GELU; approximate='tanh' for the tanh form", approximate="none")
Tanh = _activation("Tanh", F.tanh, "tanh(x)")
Sigmoid = _activation("Sigmoid", F.sigmoid, "1 / (1 + exp(-x))")
SiLU = _activation("SiLU", F.silu, "x * sigmoid(x)")
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, "x, or negative_slope * x below 0", negative_slope=0.01)
ELU = _activation("ELU", F.elu, "ELU", alpha=1.0)
Softplus = _activation("Softplus", F.softplus, "log(1 + exp(beta x)) / beta", beta=1.0, threshold=20.0)
Softmax = _activation("Softmax", F.softmax, "softmax along dim", dim=None)
LogSoftmax = _activation("LogSoftmax", F.log_softmax, "log_softmax along dim", dim=None)


class _Loss(Module):
    _fn = None
    _defaults = {}

    def __init__(self, **kwargs):
        super().__init__()
        opts = dict(self._defaults)
        for k, v in kwargs.items():
            if k not in opts:
                raise TypeError(f"nn.{type(self).__name__}: unexpected keyword argument '{k}'")
            opts[k] = v
        object.__setattr__(self, "_opts", opts)

    def forward(self, input, target):
        return type(self)._fn(input, target, **self._opts)


class CrossEntropyLoss(_Loss):
    _fn = staticmethod(F.cross_entropy)
    _defaults = {"ignore_index": -100, "reduction": "mean", "label_smoothing": 0.0}


class MSELoss(_Loss):
    _fn = staticmethod(F.mse_loss)
    _defaults = {"reduction": "mean"}


class L1Loss(_Loss):
    _fn = staticmethod(F.l1_loss)
    _defaults = {"reduction": "mean"}


class NLLLoss(_Loss):
    _fn = staticmethod(F.nll_loss)
    _defaults = {"ignore_index": -100, "reduction": "mean"}


class BCELoss(_Loss):
    _fn = staticmethod(F.binary_cross_entropy)
    _defaults = {"reduction": "mean"}


class BCEWithLogitsLoss(_Loss):
    _fn = staticmethod(F.binary_cross_entropy_with_logits)
    _defaults = {"reduction": "mean"}


class SmoothL1Loss(_Loss):
    _fn = staticmethod(F.smooth_l1_loss)
    _defaults = {"reduction": "mean", "beta": 1.0}
