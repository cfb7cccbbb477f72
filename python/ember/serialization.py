"""ember.save / ember.load: a state dict (str -> tensor) as safetensors, written atomically by the
library's safetensors writer (a temporary file renamed into place); anything else (nested dicts,
optimizer states with numbers, whole modules) pickled, its tensors as their values, and written to
a temporary file renamed into place too. ember.load reads either."""
import os
import pickle
import tempfile

from . import _ember
from ._ember import Tensor

_SAFETENSORS_MAX_HEADER = 100 * 1024 * 1024


def _is_flat_state(obj):
    return isinstance(obj, dict) and len(obj) > 0 and all(isinstance(k, str) and isinstance(v, Tensor)
                                                          for k, v in obj.items())


def save(obj, f):
    """Saves `obj` to the path `f` (str or os.PathLike). A dict of str -> tensor (a state dict)
    becomes a safetensors file (readable by the safetensors package); other objects are pickled."""
    if not isinstance(f, (str, os.PathLike)):
        raise TypeError(f"ember.save: expected a file path, got {type(f).__name__} (file objects are not supported)")
    path = os.fspath(f)
    if _is_flat_state(obj):
        _ember.save_file({k: v.detach().contiguous() for k, v in obj.items()}, path)
        return
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as out:
            pickle.dump(obj, out, protocol=pickle.HIGHEST_PROTOCOL)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(f, map_location=None, weights_only=None):
    """What ember.save wrote: a safetensors file as an ordered dict of tensors, else the pickled
    object. map_location ('cpu', 'cuda') moves the tensors of a state dict. Unpickling runs code
    named in the file: load only files you trust."""
    if not isinstance(f, (str, os.PathLike)):
        raise TypeError(f"ember.load: expected a file path, got {type(f).__name__}")
    path = os.fspath(f)
    with open(path, "rb") as fh:
        head = fh.read(9)
    if head[:1] == b"\x80":
        with open(path, "rb") as fh:
            return pickle.load(fh)
    if len(head) >= 9 and 0 < int.from_bytes(head[:8], "little") <= _SAFETENSORS_MAX_HEADER and head[8:9] == b"{":
        from collections import OrderedDict
        out = OrderedDict(_ember.load_file(path).items())
        if map_location is not None:
            out = OrderedDict((k, v.to(map_location)) for k, v in out.items())
        return out
    raise _ember.Error(f"ember.load: '{path}' is neither a safetensors file nor a pickle written by ember.save")
