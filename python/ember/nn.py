"""ember.nn: Module trees written in Python (subclass Module, assign tensors and modules as
attributes), with Linear and Embedding initialised by the C++ layers so that a seed gives the
same weights as in C++."""
from collections import OrderedDict

from . import _ember
from ._ember import Tensor, DType


class Module:
    """A layer: parameters (tensors that require grad) and child modules, found from attributes."""

    def __init__(self):
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_params" not in self.__dict__:
            raise _ember.Error(f"{type(self).__name__}: call Module.__init__(self) before assigning '{name}'")
        self._params.pop(name, None)
        self._children.pop(name, None)
        if isinstance(value, Module):
            self._children[name] = value
        elif isinstance(value, Tensor) and value.requires_grad:
            self._params[name] = value
        object.__setattr__(self, name, value)

    def register_parameter(self, name, value):
        """Stores `value` as a parameter: a contiguous leaf that requires grad."""
        if not value.dtype.is_floating_point:
            raise _ember.Error(f"Module: parameter '{name}' must be float32 or float64, got {value.dtype}")
        p = value.detach().contiguous()
        if p.is_traced or p._data_ptr() == value._data_ptr():
            p = p.clone()
        p.requires_grad_()
        setattr(self, name, p)
        return p

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix=""):
        for n, p in self._params.items():
            yield prefix + n, p
        for n, c in self._children.items():
            yield from c.named_parameters(prefix + n + ".")

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def named_children(self):
        return list(self._children.items())

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())

    def train(self, on=True):
        object.__setattr__(self, "training", on)
        for c in self._children.values():
            c.train(on)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self):
        for p in self.parameters():
            p.zero_grad()

    def state_dict(self):
        return OrderedDict((n, p.detach()) for n, p in self.named_parameters())

    def load_state_dict(self, state, strict=True):
        own = dict(self.named_parameters())
        if strict:
            missing = [n for n in own if n not in state]
            extra = [n for n in state if n not in own]
            if missing or extra:
                raise _ember.Error(f"load_state_dict: missing {missing}, unexpected {extra}")
        for n, v in state.items():
            if n in own:
                if tuple(own[n].shape) != tuple(v.shape):
                    raise _ember.Error(f"load_state_dict: '{n}' has shape {tuple(v.shape)}, "
                                       f"expected {tuple(own[n].shape)}")
                own[n].copy_(v)

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for n, c in self._children.items():
            lines.append(f"  ({n}): " + repr(c).replace("\n", "\n  "))
        return lines[0] + ")" if len(lines) == 1 else "\n".join(lines) + "\n)"


class Linear(Module):
    """y = x W^T + b; init "default" (PyTorch's), "kaiming" or "xavier", as the C++ nn::Linear."""

    def __init__(self, in_features, out_features, bias=True, init="default", dtype=DType.float32, seed=0):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        w, b = _ember._linear_init(in_features, out_features, seed, init, dtype, bias)
        self.register_parameter("weight", w)
        if b is not None:
            self.register_parameter("bias", b)
        else:
            self.bias = None

    def forward(self, x):
        return _ember.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"{self.in_features}, {self.out_features}, bias={self.bias is not None}"


class LayerNorm(Module):
    def __init__(self, dim, eps=1e-5, dtype=DType.float32):
        super().__init__()
        self.dim, self.eps = dim, eps
        self.register_parameter("weight", _ember.ones([dim], dtype))
        self.register_parameter("bias", _ember.zeros([dim], dtype))

    def forward(self, x):
        return _ember.layer_norm(x, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.dim}, eps={self.eps}"


class Embedding(Module):
    def __init__(self, num_embeddings, dim, stddev=1.0, dtype=DType.float32, seed=0):
        super().__init__()
        self.num_embeddings, self.dim = num_embeddings, dim
        self.register_parameter("weight", _ember._embedding_init(num_embeddings, dim, seed, stddev, dtype))

    def forward(self, ids):
        return _ember.embedding(self.weight, ids)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.dim}"


class Dropout(Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return _ember.dropout(x, self.p, self.training)


def _activation(name, fn):
    cls = type(name, (Module,), {"forward": lambda self, x: fn(x), "__doc__": f"{name}: {fn.__name__}(x)"})
    return cls


ReLU = _activation("ReLU", _ember.relu)
GELU = _activation("GELU", _ember.gelu)
Tanh = _activation("Tanh", _ember.tanh)
Sigmoid = _activation("Sigmoid", _ember.sigmoid)


class Sequential(Module):
    def __init__(self, *layers):
        super().__init__()
        for i, layer in enumerate(layers):
            setattr(self, str(i), layer)

    def __len__(self):
        return len(self._children)

    def __getitem__(self, i):
        return list(self._children.values())[i]

    def forward(self, x):
        for layer in self._children.values():
            x = layer(x)
        return x
