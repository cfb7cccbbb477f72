"""ember.data: Fashion-MNIST, Dataset (subclass it with __len__ and __getitem__, as
torch.utils.data.Dataset) and a DataLoader over any dataset. The C++ datasets (TensorDataset,
Fashion-MNIST) batch in C++, in the C++ loader's order, so that a seed shuffles as in the C++
programs; any other dataset is indexed item by item and its items stacked."""
import abc

import numpy as np

from . import _ember
from ._ember import (TensorDataset, load_fashion_mnist, fashion_mnist_available,  # noqa: F401
                     fashion_mnist_classes, _DataLoader)
from ._ember import Tensor, Dataset as _CppDataset


class Dataset(abc.ABC):  # noqa: B024  (subclasses define __getitem__ and __len__)
    """A map-style dataset: subclasses define __getitem__(i) and __len__()."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}.__getitem__")


Dataset.register(_CppDataset)


def _cpp_item(self, i):
    n = len(self)
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
        raise TypeError(f"dataset index must be an int, got {type(i).__name__}")
    if not -n <= i < n:
        raise IndexError(f"dataset index {i} is out of range for {n} items")
    x, y = self.get_batch([int(i) % n])
    return x[0], y[0]


_CppDataset.__getitem__ = _cpp_item


def default_collate(items):
    """A batch from a list of items: tensors stacked, numbers made a tensor, tuples and dicts
    collated field by field."""
    first = items[0]
    if isinstance(first, Tensor):
        return _ember.stack(list(items), 0)
    if isinstance(first, np.ndarray):
        return Tensor._from_ndarray(np.ascontiguousarray(np.stack(items)))
    if isinstance(first, (bool, int, float, np.number)):
        from ._tensor import tensor
        return tensor(list(items), dtype=_ember.DType.float64 if isinstance(first, float) else None)
    if isinstance(first, dict):
        return {k: default_collate([it[k] for it in items]) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(default_collate(list(f)) for f in zip(*items)) if isinstance(first, tuple) else \
            [default_collate(list(f)) for f in zip(*items)]
    raise TypeError(f"default_collate: cannot batch items of type {type(first).__name__} "
                    "(expected tensors, arrays, numbers, tuples or dicts of them)")


class DataLoader:
    """for x, y in DataLoader(dataset, batch_size=64, shuffle=True): the batches of one epoch;
    each iteration over the loader is the next epoch (a fresh order when shuffling). The order
    comes from seed= (default 0) or, with generator=, from that ember.Generator."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=0, collate_fn=None,
                 generator=None, num_workers=0, pin_memory=False):
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TypeError(f"DataLoader: the dataset must define __len__ and __getitem__, got {type(dataset).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.collate_fn = collate_fn or default_collate
        self._generator = generator
        self._seed = seed
        self._cpp = None
        if isinstance(dataset, _CppDataset) and collate_fn is None and generator is None:
            self._cpp = _DataLoader(dataset, batch_size, shuffle, drop_last, seed)
        self.epoch = 0

    def __len__(self):
        if self._cpp is not None:
            return len(self._cpp)
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        epoch = self.epoch
        self.epoch += 1
        if self._cpp is not None:
            order = self._cpp.order(epoch)
            for i in range(len(self._cpp)):
                yield self._cpp.batch(order, i)
            return
        n = len(self.dataset)
        if not self.shuffle:
            order = np.arange(n)
        elif self._generator is not None:
            order = self._generator._rng.permutation(n)
        else:
            order = np.random.Generator(np.random.PCG64([self._seed, epoch])).permutation(n)
        for b in range(len(self)):
            idx = order[b * self.batch_size:(b + 1) * self.batch_size]
            yield self.collate_fn([self.dataset[int(i)] for i in idx])
