"""ember.data: Fashion-MNIST and a DataLoader over tensor datasets (the C++ loader's order, so a
seed shuffles the same way as in the C++ programs)."""
from ._ember import (Dataset, TensorDataset, load_fashion_mnist, fashion_mnist_available,  # noqa: F401
                     fashion_mnist_classes, _DataLoader)


class DataLoader:
    """for x, y in DataLoader(dataset, batch_size=64, shuffle=True, seed=0): batches of an epoch;
    each iteration over the loader is the next epoch (a fresh order when shuffling)."""

    def __init__(self, dataset, batch_size=64, shuffle=False, drop_last=False, seed=0):
        self._loader = _DataLoader(dataset, batch_size, shuffle, drop_last, seed)
        self.epoch = 0

    def __len__(self):
        return len(self._loader)

    def __iter__(self):
        order = self._loader.order(self.epoch)
        self.epoch += 1
        for i in range(len(self._loader)):
            yield self._loader.batch(order, i)
