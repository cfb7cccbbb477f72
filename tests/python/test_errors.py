"""Bad input from Python raises (ember.Error with the C++ message, or the Python exception that
fits) and never crashes the interpreter."""
import numpy as np
import pytest

import ember

CASES = [
    ("undefined tensor", lambda: ember.Tensor().shape, ember.Error, "undefined Tensor"),
    ("undefined operand", lambda: ember.Tensor() + ember.ones([2]), ember.Error, "undefined"),
    ("negative shape", lambda: ember.zeros([-1]), ember.Error, "negative dimension"),
    ("shape overflow", lambda: ember.zeros([2**40, 2**40]), ember.Error, "64 bits"),
    ("two -1 in reshape", lambda: ember.ones([6]).reshape(-1, -1), ember.Error, "only one dimension may be -1"),
    ("slice dim", lambda: ember.ones([3]).slice(5, 0, 1), ember.Error, "out of range"),
    ("embedding id", lambda: ember.embedding(ember.ones([3, 2]), ember.tensor([7])), ember.Error, "id 7"),
    ("embedding float ids", lambda: ember.embedding(ember.ones([3, 2]), ember.ones([1])), ember.Error, "int64"),
    ("cross_entropy target", lambda: ember.cross_entropy(ember.ones([2, 3]), ember.tensor([0, 5])), ember.Error, "target 5"),
    ("concat nothing", lambda: ember.concat([], 0), ember.Error, "at least one"),
    ("layer_norm weight", lambda: ember.layer_norm(ember.ones([2, 3]), ember.ones([4]), ember.ones([4])), ember.Error, "weight"),
    ("topk k", lambda: ember.topk(ember.ones([3]), 9), ember.Error, "k = 9"),
    ("vjp count", lambda: ember.make_vjp(lambda x: x * 2.0, ember.ones([2]))[1](), ember.Error, "cotangent"),
    ("vjp shape", lambda: ember.make_vjp(lambda x: x * 2.0, ember.ones([2]))[1](ember.ones([5])), ember.Error, "shape [5]"),
    ("backward of a vector", lambda: ember.ones([2]).requires_grad_().exp().backward(), ember.Error, "cotangent"),
    ("dropout p", lambda: ember.dropout(ember.ones([3]), 1.5), ember.Error, "p must lie"),
    ("exp of int64", lambda: ember.exp(ember.ones([2], ember.int64)), ember.Error, "expected a floating tensor"),
    ("missing file", lambda: ember.load_npy("/nonexistent.npy"), ember.Error, "cannot open"),
    ("missing dataset", lambda: ember.data.load_fashion_mnist(dir="/nonexistent"), ember.Error, "not found"),
    ("optimizer of a non-leaf", lambda: ember.optim.SGD([ember.ones([2])]), ember.Error, "requires_grad_"),
    ("float index", lambda: ember.ones([2])[0.5], IndexError, "unsupported index"),
    ("Linear(0, 3)", lambda: ember.nn.Linear(0, 3), ember.Error, "positive"),
    ("CustomOp without forward", lambda: ember.CustomOp("py_no_forward", forward=None), ember.Error, "forward"),
    ("gradcheck in float32", lambda: ember.gradcheck(ember.exp, [ember.ones([2])]), ember.Error, "float64"),
    ("wrong argument type", lambda: ember.exp("x"), TypeError, ""),
    ("shape of strings", lambda: ember.zeros(["a"]), TypeError, ""),
]


@pytest.mark.parametrize("name,fn,exc,fragment", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises(name, fn, exc, fragment):
    with pytest.raises(exc) as e:
        fn()
    assert fragment in str(e.value)


def test_empty_and_zero_dim_tensors_work():
    assert ember.from_numpy(np.zeros((0, 3))).sum(0).tolist() == [0.0, 0.0, 0.0]
    assert ember.from_numpy(np.array(2.5)).exp().item() == pytest.approx(np.exp(2.5))
    assert repr(ember.Tensor()) == "tensor(undefined)"
