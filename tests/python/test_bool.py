"""The Bool dtype from Python: comparisons give ember.bool, masks cross to and from NumPy's bool_,
logical ops and operators, and masks in arithmetic take the other operand's dtype."""
import numpy as np

import ember
from helpers import randn


def test_comparisons_give_bool_that_numpy_reads_as_bool_(rng):
    a, b = randn(rng, 3, 4), randn(rng, 4)
    m = ember.gt(ember.from_numpy(a), ember.from_numpy(b))
    assert m.dtype == ember.bool
    assert not m.dtype.is_floating_point and m.dtype.itemsize == 1
    assert m.numpy().dtype == np.bool_
    np.testing.assert_array_equal(m.numpy(), a > b)
    np.testing.assert_array_equal((ember.from_numpy(a) <= 0.0).numpy(), a <= 0.0)
    np.testing.assert_array_equal(ember.ne(ember.from_numpy(a), ember.from_numpy(b)).numpy(), a != b)


def test_numpy_bool_arrays_become_bool_tensors(rng):
    mask = randn(rng, 2, 5) > 0
    t = ember.from_numpy(mask)
    assert t.dtype == ember.bool
    np.testing.assert_array_equal(t.numpy(), mask)
    assert ember.tensor(mask).dtype == ember.bool
    np.testing.assert_array_equal(t.to(ember.float64).numpy(), mask.astype(np.float64))
    assert ember.from_numpy(randn(rng, 3)).to("bool").dtype == ember.bool


def test_logical_ops_operators_and_masks_in_arithmetic(rng):
    a, b = randn(rng, 3, 4), randn(rng, 3, 4)
    p, q = a > 0, b > 0
    tp, tq = ember.from_numpy(p), ember.from_numpy(q)
    np.testing.assert_array_equal(ember.logical_and(tp, tq).numpy(), p & q)
    np.testing.assert_array_equal((tp | tq).numpy(), p | q)
    np.testing.assert_array_equal((tp ^ tq).numpy(), p ^ q)
    np.testing.assert_array_equal((~tp).numpy(), ~p)
    assert bool(ember.any(tp)) == bool(p.any())
    assert bool(ember.all(tp)) == bool(p.all())
    x = ember.from_numpy(a)
    np.testing.assert_allclose((x * tp).numpy(), a * p)
    assert (x * tp).dtype == ember.float64
    np.testing.assert_array_equal(ember.where(tp, x, ember.from_numpy(b)).numpy(), np.where(p, a, b))
    assert int(ember.sum(tp).item()) == int(p.sum())
