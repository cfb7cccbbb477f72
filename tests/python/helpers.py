"""Shared test helpers (tests/python is on sys.path through pyproject's pytest settings)."""
import numpy as np

import ember


def randn(rng, *shape, dtype=np.float64):
    """Normal samples with no exact zeros: a wrong sign or a dropped term shows up as a difference."""
    a = rng.standard_normal(shape).astype(dtype)
    a[a == 0] = 0.5
    return a


def assert_close(t, expected, rtol=1e-5, atol=1e-6):
    got = t.numpy() if isinstance(t, ember.Tensor) else np.asarray(t)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
