"""ember.optim: SGD, Adam and AdamW with torch's constructor arguments and param_groups, over the
C++ optimizers (fused update kernels, one per group). They update the parameters' memory in place
from the gradients that loss.backward() left in p.grad.

    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    opt = ember.optim.AdamW(groups, lr=6e-4, betas=(0.9, 0.95))
    for g in opt.param_groups: g["lr"] = 1e-4     # takes effect at the next step()
"""
from . import _ember
from ._ember import Tensor, LrSchedule, clip_grad_norm, grad_norm  # noqa: F401
from ._ember import SGD as _CppSGD, Adam as _CppAdam, AdamW as _CppAdamW

_STATE_KEYS = ("step", "lr")


class Optimizer:
    """The Python face of the C++ optimizers: param_groups (a list of dicts holding "params" and
    the hyperparameters), step(), zero_grad(set_to_none=True), state_dict()."""
    _hyper = ()

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.param_groups = []
        self.state = {}
        self._built = []  # per group: (C++ optimizer, the hyperparameters it was built with)
        self._fused = True
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params must be an iterable of tensors or of dicts, "
                            "got a single tensor")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group):
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError(f"{type(self).__name__}: a parameter group is a dict with a 'params' key")
        g = dict(group)
        ps = g["params"]
        g["params"] = [ps] if isinstance(ps, Tensor) else list(ps)
        for p in g["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: parameters must be ember.Tensors, got {type(p).__name__}")
        seen = {id(p) for other in self.param_groups for p in other["params"]}
        if any(id(p) in seen for p in g["params"]):
            raise ValueError(f"{type(self).__name__}: some parameters appear in more than one parameter group")
        unknown = set(g) - set(self.defaults) - {"params"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown hyperparameters {sorted(unknown)} in a parameter group "
                            f"(expected {sorted(self.defaults)})")
        for k, v in self.defaults.items():
            g.setdefault(k, v)
        self.param_groups.append(g)
        self._built.append(None)
        self._cpp(len(self.param_groups) - 1)  # checks the parameters now, as the C++ constructor does

    def _options(self, g):
        return tuple((k, g[k] if not isinstance(g[k], list) else tuple(g[k])) for k in self._hyper)

    def _cpp(self, i):
        """Group i's C++ optimizer, rebuilt (keeping its state) when a hyperparameter other than lr
        changed, and given the group's current lr."""
        g = self.param_groups[i]
        opts = self._options(g)
        built = self._built[i]
        if built is None or built[1] != opts or built[2] != [id(p) for p in g["params"]]:
            if not g["params"]:
                return None
            opt = self._make(g["params"], float(g["lr"]), **{k: g[k] for k in self._hyper})
            opt.set_use_fused(self._fused)
            if built is not None and built[2] == [id(p) for p in g["params"]]:
                state = built[0].state_dict()
                state["lr"] = opt.state_dict()["lr"]
                opt.load_state_dict(state)
            self._built[i] = built = (opt, opts, [id(p) for p in g["params"]])
        if built[0].lr != g["lr"]:
            built[0].lr = float(g["lr"])
        return built[0]

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for i in range(len(self.param_groups)):
            opt = self._cpp(i)
            if opt is not None:
                opt.step()
        return loss

    def zero_grad(self, set_to_none=True):
        """Drops every gradient (the next backward writes them afresh, as with set_to_none=True)."""
        for g in self.param_groups:
            for p in g["params"]:
                p.zero_grad()

    @property
    def lr(self):
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value):
        for g in self.param_groups:
            g["lr"] = float(value)

    @property
    def steps(self):
        opt = self._cpp(0)
        return opt.steps if opt is not None else 0

    @property
    def kind(self):
        return self._kind

    def params(self):
        return [p for g in self.param_groups for p in g["params"]]

    def set_use_fused(self, on):
        self._fused = bool(on)
        for b in self._built:
            if b is not None:
                b[0].set_use_fused(self._fused)

    def state_dict(self):
        """The C++ optimizers' state (step, lr, per-parameter buffers); with several groups each
        entry is prefixed "group<i>."."""
        out = {}
        for i in range(len(self.param_groups)):
            opt = self._cpp(i)
            if opt is None:
                continue
            prefix = "" if len(self.param_groups) == 1 else f"group{i}."
            for k, v in opt.state_dict().items():
                out[prefix + k] = v
        return out

    def load_state_dict(self, state):
        for i in range(len(self.param_groups)):
            opt = self._cpp(i)
            if opt is None:
                continue
            prefix = "" if len(self.param_groups) == 1 else f"group{i}."
            mine = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
            opt.load_state_dict(mine)
            self.param_groups[i]["lr"] = opt.lr

    def __repr__(self):
        groups = ", ".join("{" + ", ".join(f"{k}={g[k]}" for k in self.defaults) + f", {len(g['params'])} params}}"
                           for g in self.param_groups)
        return f"{type(self).__name__}({groups})"


def _check_lr(lr, what):
    if not lr >= 0.0:
        raise ValueError(f"{what}: lr must be >= 0, got {lr}")


class SGD(Optimizer):
    _hyper = ("momentum", "nesterov", "weight_decay")
    _kind = "sgd"

    def __init__(self, params, lr=0.01, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        _check_lr(lr, "SGD")
        if dampening != 0.0:
            raise ValueError("SGD: dampening is not supported by Ember")
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov))

    @staticmethod
    def _make(params, lr, momentum, nesterov, weight_decay):
        return _CppSGD(params, lr, float(momentum), bool(nesterov), float(weight_decay))


class Adam(Optimizer):
    _hyper = ("betas", "eps", "weight_decay")
    _kind = "adam"
    _cpp_class = _CppAdam

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, fused=None):
        _check_lr(lr, type(self).__name__)
        if amsgrad:
            raise ValueError(f"{type(self).__name__}: amsgrad is not supported by Ember")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    @classmethod
    def _make(cls, params, lr, betas, eps, weight_decay):
        b = tuple(betas)
        return cls._cpp_class(params, lr, (float(b[0]), float(b[1])), float(eps), float(weight_decay))


class AdamW(Adam):
    _kind = "adamw"
    _cpp_class = _CppAdamW

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, amsgrad=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, fused)
