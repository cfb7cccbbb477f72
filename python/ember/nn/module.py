"""nn.Module (parameters, buffers and child modules found from attributes, as torch.nn.Module)
and nn.Parameter."""
from collections import OrderedDict

from .. import _ember
from .._ember import Tensor


class _ParameterMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.requires_grad


class Parameter(metaclass=_ParameterMeta):
    """Parameter(data, requires_grad=True): a leaf tensor on `data`'s memory that requires grad.

    Differs from torch: the result is a plain ember.Tensor (Ember has no tensor subclasses);
    isinstance(t, nn.Parameter) is true of any tensor that requires grad (Ember does not tell leaves
    from results there), which is how Module tells parameters from other tensor attributes."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _ember.empty([0])
        if not isinstance(data, Tensor):
            raise TypeError(f"nn.Parameter: expected an ember.Tensor, got {type(data).__name__}")
        if requires_grad and not data.dtype.is_floating_point:
            raise ValueError(f"nn.Parameter: only float tensors can require grad, got {data.dtype}")
        p = data.detach()
        if not p.is_contiguous():
            p = p.contiguous()
        return p.requires_grad_(requires_grad)


def _check_name(owner, name, what):
    if not isinstance(name, str):
        raise TypeError(f"{type(owner).__name__}.{what}: the name must be a str, got {type(name).__name__}")
    if not name or "." in name:
        raise KeyError(f"{type(owner).__name__}.{what}: bad name {name!r} (non-empty, without '.')")


class Module:
    """A layer: parameters (tensors that require grad), buffers (other state saved with the model,
    such as batch norm's running statistics) and child modules, found from attributes."""

    def __init__(self):
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_params" not in self.__dict__:
            raise _ember.Error(f"{type(self).__name__}: call Module.__init__(self) before assigning '{name}'")
        if name in self._buffers and (value is None or isinstance(value, Tensor)):
            # m.running_mean = t replaces the buffer, as in torch
            self._buffers[name] = value
            object.__setattr__(self, name, value)
            return
        self._params.pop(name, None)
        self._children.pop(name, None)
        self._buffers.pop(name, None)
        if isinstance(value, Module):
            self._children[name] = value
        elif isinstance(value, Tensor) and value.requires_grad:
            self._params[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for d in (self._params, self._buffers, self._children):
            d.pop(name, None)
        object.__delattr__(self, name)

    def register_parameter(self, name, value):
        """Stores `value` as a parameter: a contiguous leaf that requires grad (None: no parameter
        under that name, e.g. a layer without bias)."""
        _check_name(self, name, "register_parameter")
        if value is None:
            setattr(self, name, None)
            return None
        if not isinstance(value, Tensor):
            raise TypeError(f"register_parameter: '{name}' must be an ember.Tensor or None, got {type(value).__name__}")
        if not value.dtype.is_floating_point:
            raise _ember.Error(f"Module: parameter '{name}' must be float32 or float64, got {value.dtype}")
        p = value
        if not (value.requires_grad and value.is_contiguous()):
            p = value.detach().contiguous()
            if p.is_traced or p._data_ptr() == value._data_ptr():
                p = p.clone()
            p.requires_grad_()
        setattr(self, name, p)
        return p

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that is state but not a parameter (running statistics, a causal mask): moved
        with the module, and in state_dict() unless persistent=False."""
        _check_name(self, name, "register_buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: '{name}' must be an ember.Tensor or None, got {type(tensor).__name__}")
        if name in self.__dict__ and name not in self._buffers:
            raise KeyError(f"register_buffer: attribute '{name}' already exists")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name, module):
        _check_name(self, name, "add_module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: '{name}' must be an nn.Module or None, got {type(module).__name__}")
        if module is None:
            self._children[name] = None
            object.__setattr__(self, name, None)
        else:
            setattr(self, name, module)

    register_module = add_module

    def get_submodule(self, target):
        m = self
        for part in target.split(".") if target else []:
            if part not in m._children:
                raise AttributeError(f"{type(m).__name__} has no submodule '{part}' (looking for '{target}')")
            m = m._children[part]
        return m

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---- traversal ----

    def named_modules(self, memo=None, prefix=""):
        """(name, module) for this module and every descendant, each module once."""
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for n, c in self._children.items():
            if c is not None:
                yield from c.named_modules(memo, prefix + ("." if prefix else "") + n)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """(name, child) pairs; a list (iterable as torch's generator, and indexable)."""
        return [(n, c) for n, c in self._children.items() if c is not None]

    def children(self):
        return [c for _, c in self.named_children()]

    def _named_members(self, table, prefix, recurse, remove_duplicate):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mp, m in mods:
            for n, t in getattr(m, table).items():
                if t is None:
                    continue
                if remove_duplicate:
                    if id(t) in seen:
                        continue
                    seen.add(id(t))
                yield mp + ("." if mp else "") + n, t

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, parameter) pairs; a parameter shared by two modules (tied weights) comes once,
        under its first name, unless remove_duplicate=False."""
        return self._named_members("_params", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every parameter once (tied weights are not repeated). A list, usable as torch's iterator."""
        return [p for _, p in self.named_parameters(recurse=recurse)]

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        return [b for _, b in self.named_buffers(recurse=recurse)]

    def num_parameters(self):
        """The number of trainable numbers, each shared parameter counted once."""
        return sum(p.numel() for p in self.parameters())

    def apply(self, fn):
        """fn(m) for every descendant, children first, then this module (as torch)."""
        for c in self.children():
            c.apply(fn)
        fn(self)
        return self

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError(f"train(mode): mode must be a bool, got {type(mode).__name__}")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clears every parameter's gradient (Ember zeroes it; the next backward sets it afresh
        either way, so set_to_none changes nothing observable but p.grad being zeros)."""
        for p in self.parameters():
            p.zero_grad()

    # ---- state ----

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Parameters and persistent buffers by dotted name (tied weights under each name, as torch)."""
        out = OrderedDict() if destination is None else destination
        for mp, m in self.named_modules(prefix=prefix.rstrip(".")):
            dot = mp + "." if mp else ""
            for n, p in m._params.items():
                if p is not None:
                    out[dot + n] = p if keep_vars else p.detach()
            for n, b in m._buffers.items():
                if b is not None and n not in m._non_persistent:
                    out[dot + n] = b if keep_vars else b.detach()
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Copies each entry into the parameter or buffer of that name (shapes must match).
        strict: the names must be exactly this module's. Returns (missing_keys, unexpected_keys)."""
        own = self.state_dict(keep_vars=True)
        missing = [n for n in own if n not in state_dict]
        unexpected = [n for n in state_dict if n not in own]
        if strict and (missing or unexpected):
            raise _ember.Error(f"load_state_dict: missing {missing}, unexpected {unexpected}")
        for n, v in state_dict.items():
            if n not in own:
                continue
            if not isinstance(v, Tensor):
                raise TypeError(f"load_state_dict: '{n}' must be an ember.Tensor, got {type(v).__name__}")
            if tuple(own[n].shape) != tuple(v.shape):
                raise _ember.Error(f"load_state_dict: '{n}' has shape {tuple(v.shape)}, "
                                   f"expected {tuple(own[n].shape)}")
            own[n].copy_(v.to(own[n].dtype) if v.dtype != own[n].dtype else v)
        return _IncompatibleKeys(missing, unexpected)

    # ---- devices and dtypes ----

    def _apply_tensors(self, fn):
        """Replaces every parameter and buffer by fn(tensor), keeping ties (one result per tensor)."""
        done = {}
        for m in self.modules():
            for n, p in list(m._params.items()):
                if p is None:
                    continue
                if id(p) not in done:
                    q = fn(p)
                    if q is not p:
                        q = q.detach().requires_grad_()
                    done[id(p)] = q
                object.__setattr__(m, n, done[id(p)])
                m._params[n] = done[id(p)]
            for n, b in list(m._buffers.items()):
                if b is not None:
                    if id(b) not in done:
                        done[id(b)] = fn(b)
                    object.__setattr__(m, n, done[id(b)])
                    m._buffers[n] = done[id(b)]
        return self

    def to(self, target):
        """model.to("cuda"), model.to(ember.float64): parameters and float buffers moved or cast."""
        from .._ember import DType
        if isinstance(target, DType):
            return self._apply_tensors(lambda t: t.to(target) if t.dtype.is_floating_point and t.dtype != target else t)
        return self._apply_tensors(lambda t: t.to(target))

    def cuda(self):
        return self.to("cuda")

    def cpu(self):
        return self.to("cpu")

    def float(self):
        from .._ember import DType
        return self.to(DType.float32)

    def double(self):
        from .._ember import DType
        return self.to(DType.float64)

    # ---- printing ----

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for n, c in self._children.items():
            lines.append(f"  ({n}): " + repr(c).replace("\n", "\n  "))
        return lines[0] + ")" if len(lines) == 1 else "\n".join(lines) + "\n)"

    # ---- pickling: tensors pickle themselves (ember/_pickle.py) ----

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)


class _IncompatibleKeys(tuple):
    def __new__(cls, missing, unexpected):
        t = super().__new__(cls, (missing, unexpected))
        t.missing_keys, t.unexpected_keys = missing, unexpected
        return t
