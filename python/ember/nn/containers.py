"""Sequential, ModuleList and ModuleDict, as torch's."""
from collections import OrderedDict

from .module import Module


def _as_module(m, what):
    if not isinstance(m, Module):
        raise TypeError(f"nn.{what}: expected an nn.Module, got {type(m).__name__}")
    return m


class Sequential(Module):
    """Sequential(a, b, c) or Sequential(OrderedDict([("name", a), ...]))."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, _as_module(m, "Sequential"))
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), _as_module(m, "Sequential"))

    def __len__(self):
        return len(self._children)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Sequential(OrderedDict(list(self._children.items())[i]))
        mods = list(self._children.values())
        if not -len(mods) <= i < len(mods):
            raise IndexError(f"Sequential: index {i} is out of range for {len(mods)} modules")
        return mods[i]

    def __iter__(self):
        return iter(list(self._children.values()))

    def append(self, m):
        self.add_module(str(len(self)), _as_module(m, "Sequential"))
        return self

    def forward(self, x):
        for layer in self._children.values():
            x = layer(x)
        return x


class ModuleList(Module):
    """A list of modules whose parameters the parent sees (named "0", "1", ...)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _reindex(self, mods):
        for k in list(self._children):
            self.__delattr__(k)
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def __len__(self):
        return len(self._children)

    def __iter__(self):
        return iter(list(self._children.values()))

    def __getitem__(self, i):
        mods = list(self._children.values())
        if isinstance(i, slice):
            return ModuleList(mods[i])
        if not -len(mods) <= i < len(mods):
            raise IndexError(f"ModuleList: index {i} is out of range for {len(mods)} modules")
        return mods[i]

    def __setitem__(self, i, m):
        mods = list(self._children.values())
        mods[i] = _as_module(m, "ModuleList")
        self._reindex(mods)

    def __delitem__(self, i):
        mods = list(self._children.values())
        del mods[i]
        self._reindex(mods)

    def append(self, m):
        self.add_module(str(len(self)), _as_module(m, "ModuleList"))
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, m):
        mods = list(self._children.values())
        mods.insert(index, _as_module(m, "ModuleList"))
        self._reindex(mods)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward: iterate over it in the parent's forward")


class ModuleDict(Module):
    """A dict of modules whose parameters the parent sees (named by key)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        if key not in self._children:
            raise KeyError(f"ModuleDict: no module named {key!r}")
        return self._children[key]

    def __setitem__(self, key, m):
        self.add_module(key, _as_module(m, "ModuleDict"))

    def __delitem__(self, key):
        self.__delattr__(key)

    def __len__(self):
        return len(self._children)

    def __iter__(self):
        return iter(list(self._children))

    def __contains__(self, key):
        return key in self._children

    def keys(self):
        return list(self._children.keys())

    def values(self):
        return list(self._children.values())

    def items(self):
        return list(self._children.items())

    def pop(self, key):
        m = self[key]
        del self[key]
        return m

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self[k] = m

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward: index it in the parent's forward")
