"""A custom op written in Python, checked with ember.gradcheck: first a correct softplus, then the
same op with a wrong VJP, which gradcheck catches and locates (worst element, index, both values).

    python examples/custom_op/custom_op_python.py      (after `pip install .`)
"""
import numpy as np

import ember

# %% softplus(x) = log(1 + e^x): forward in NumPy (it receives untraced tensors; .numpy() is free),
# VJP in Ember ops, so that the rule itself can be differentiated (grad of grad).
softplus = ember.CustomOp(
    "softplus_py",
    forward=lambda x: np.logaddexp(0.0, x.numpy()),
    vjp=lambda g, i, inputs, out: g * ember.sigmoid(inputs[0]),
    jvp=lambda tangents, inputs, out: tangents[0] * ember.sigmoid(inputs[0]),
)

ember.manual_seed(0)
x = ember.randn([3, 4], ember.float64)  # gradcheck differentiates numerically in float64
print("softplus(x)[0] =", softplus(x)[0].tolist())

r = ember.gradcheck(softplus, [x])
print("correct VJP:", "ok" if r.ok else "FAILED", "| worst error", f"{r.max_error:.2e}")

# %% grad of grad goes through the Python VJP rule: d2/dx2 softplus = sigmoid * (1 - sigmoid)
d2 = ember.grad(lambda x: ember.grad(lambda y: softplus(y).sum())(x).sum())(x)
s = 1 / (1 + np.exp(-x.numpy()))
print("second derivative matches sigmoid' :", np.allclose(d2.numpy(), s * (1 - s)))

# %% The classic slip: the derivative of log(1 + e^x) written as e^x / (1 + e^x)^2 (that is
# sigmoid', one derivative too many). The forward is right, so only a gradient check can tell.
wrong = ember.CustomOp(
    "softplus_py_wrong",
    forward=lambda x: np.logaddexp(0.0, x.numpy()),
    vjp=lambda g, i, inputs, out: g * ember.sigmoid(inputs[0]) * (1.0 - ember.sigmoid(inputs[0])),
)
r = ember.gradcheck(wrong, [x], check_jvp=False, check_dot_product=False)
print("wrong VJP:", "ok" if r.ok else "caught")
print(f"  worst element: input {r.input}, index {tuple(r.input_index)}, output {tuple(r.output_index)}")
print(f"  analytic (the rule) {r.analytic:.6f} vs numeric (central differences) {r.numeric:.6f}")
print("  message:", r.message)
assert not r.ok
