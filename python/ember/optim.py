"""ember.optim: the C++ optimizers (fused update kernels) and learning-rate schedules. They update
the parameters' memory in place and read the gradients that loss.backward() left in p.grad."""
from ._ember import Optimizer, SGD, Adam, AdamW, LrSchedule, clip_grad_norm, grad_norm  # noqa: F401
