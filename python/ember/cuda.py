"""ember.cuda: whether a GPU is usable, and why not. The CUDA backend (libember_cuda.so beside the
core library) is loaded on the first CUDA tensor; a CPU-only wheel (the default `pip install .`)
has none, and then every CUDA request raises ember.Error saying so."""
from . import _ember

_BUILD_HINT = "for the CUDA backend, reinstall where nvcc exists: pip install . -C cmake.define.EMBER_CUDA=AUTO"


def is_available():
    """True when Ember was built with CUDA and a GPU is usable (decided by the first call)."""
    return _ember.cuda_available()


def built_with_cuda():
    """True when this installation carries the CUDA backend library, GPU or not."""
    return _ember._cuda_built()


def unavailable_reason():
    """Why is_available() is False ("" when it is True)."""
    return _ember._cuda_unavailable_reason()


def device_name():
    """The GPU's name, e.g. "NVIDIA H200"; ember.Error without one."""
    _require("ember.cuda.device_name()")
    return _ember._cuda_device_name()


def synchronize():
    """Waits for all work on the GPU (raises a pending kernel error)."""
    _require("ember.cuda.synchronize()")
    _ember._cuda_synchronize()


def memory_stats():
    """The CUDA caching allocator's counters (current, peak and cached bytes, allocations)."""
    _require("ember.cuda.memory_stats()")
    return _ember.memory_stats(_ember.Device.cuda)


def _require(what):
    """ember.Error naming `what` and the reason when no GPU is usable."""
    if _ember.cuda_available():
        return
    hint = "" if built_with_cuda() else "; " + _BUILD_HINT
    raise _ember.Error(f"{what}: CUDA is not available: {unavailable_reason()}{hint} "
                       "(ember.cuda.is_available() tells beforehand)")
