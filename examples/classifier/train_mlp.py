"""The Fashion-MNIST MLP of train_classifier, from Python: 784-256-10, ReLU, Adam, batch 128.

    python examples/classifier/train_mlp.py [EPOCHS]      (after `pip install .`)
"""
import sys

import ember
from ember import nn, optim, data

train, test = data.load_fashion_mnist(train=True), data.load_fashion_mnist(train=False)
model = nn.Sequential(nn.Linear(784, 256, init="kaiming", seed=1), nn.ReLU(), nn.Linear(256, 10, seed=2))
opt = optim.Adam(model.parameters(), lr=1e-3)
loader = data.DataLoader(train, batch_size=128, shuffle=True, seed=0)
for epoch in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    for x, y in loader:
        opt.zero_grad()
        ember.cross_entropy(model(x), y).backward()
        opt.step()
    with ember.no_grad():
        accuracy = ember.mean(ember.cast(ember.eq(model(test.inputs).argmax(1), test.targets), ember.float32)).item()
    print(f"epoch {epoch + 1}: test accuracy {100 * accuracy:.2f}%")
