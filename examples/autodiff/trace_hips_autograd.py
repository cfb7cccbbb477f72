#!/usr/bin/python3
"""Watch HIPS Autograd's reverse mode work: trace the calls that autograd.core.make_vjp makes while it
records y = ln(x1) + x1*x2 - sin(x2) at x1 = 2 (x2 = 5 held fixed, so that x1 fans out into ln and
the product), then the calls of one backward pass, then grad(grad(f)) to show nested trace ids.

It uses sys.settrace and prints only the calls into autograd's own core functions (tracer.py,
core.py, util.py), with the arguments that tell the story (trace ids, primitive names, cotangents).

Autograd is not part of Ember. Install it outside the repository, e.g.
    /usr/bin/python3 -m venv --system-site-packages /tmp/hips-venv && /tmp/hips-venv/bin/pip install autograd
    /tmp/hips-venv/bin/python examples/autodiff/trace_hips_autograd.py
"""
import os
import sys

try:
    import autograd
    import autograd.numpy as np
    from autograd import grad
    from autograd.core import make_vjp
except ImportError:
    sys.exit("trace_hips_autograd.py: the 'autograd' package is not installed; see this script's docstring")

import numpy

AUTOGRAD_DIR = os.path.dirname(autograd.__file__)
NODE_NAMES = {}  # id(VJPNode) -> the primitive that made it, filled as VJPNode.__init__ returns
PLUMBING = {"metadata", "ndim", "iscomplexobj", "shape", "result_type"}  # notrace helpers: noise here
CORE_FILES = {os.path.join(AUTOGRAD_DIR, f) for f in ("tracer.py", "core.py", "util.py")}
# Section 4 (two inputs, packed in a tuple) also watches the container and vector-space code.
TUPLE_FILES = {os.path.join(AUTOGRAD_DIR, f) for f in ("builtins.py", os.path.join("numpy", "numpy_vspaces.py"))}


def short(v):
    """A value in a few characters: boxes show their trace id and the value inside."""
    if type(v).__name__.endswith("Box"):
        return f"Box(trace={v._trace}, value={short(v._value)})"
    if type(v).__name__ == "VJPNode":
        return f"VJPNode({NODE_NAMES.get(id(v), 'root')})"
    if isinstance(v, (numpy.ndarray, numpy.generic)) and numpy.ndim(v) == 0:
        v = float(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    if v is None:
        return "None"
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(short(a) for a in v) + ")"
    if type(v).__name__ == "SparseObject":
        return f"SparseObject(vs={short(v.vs)})"
    if type(v).__name__.endswith("VSpace"):
        if type(v).__name__ == "ArrayVSpace":  # shape and dtype: what a cotangent must have
            return f"ArrayVSpace({v.shape}, {v.dtype})"
        return f"{type(v).__name__}({', '.join(short(s) for s in v.shape)})"
    if callable(v):
        return getattr(v, "__name__", "fn")
    return type(v).__name__


class CallPrinter:
    """A sys.settrace hook that prints calls into autograd's core as an indented tree."""

    def __init__(self, verbose=True, tuples=False):
        self.depth = 0
        self.verbose = verbose
        self.tuples = tuples
        self.lines = 0
        self.seen = set()  # generator frames already announced (each resume is another 'call')

    def describe(self, frame):
        code, loc = frame.f_code, frame.f_locals
        name = code.co_name
        where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
        if name == "f_wrapped":  # a primitive: the raw function it wraps is a free variable
            raw = loc.get("f_raw")
            if getattr(raw, "__name__", "") in PLUMBING:
                return None, where
            args = ", ".join(short(a) for a in loc.get("args", ()))
            return f"primitive {getattr(raw, '__name__', raw)}({args})", where
        if name == "new_box":
            return f"new_box(value={short(loc['value'])}, trace={loc['trace']}, node={short(loc['node'])})", where
        if name == "new_trace":
            return f"trace_stack.new_trace(): opens trace {loc['self'].top + 1}", where
        if name == "__init__" and "parent_argnums" in loc:
            fun = loc.get("fun")
            return (f"VJPNode.__init__(fun={getattr(fun, '__name__', fun)}, parent_argnums={loc['parent_argnums']}, "
                    f"ans={short(loc['value'])})"), where
        if name == "backward_pass":
            return f"backward_pass(g={short(loc['g'])}, end_node={short(loc['end_node'])})", where
        if name == "add_outgrads":
            prev = loc["prev_g_flagged"]
            prev_s = "None" if prev is None else f"({short(prev[0])}, mutable={prev[1]})"
            return f"add_outgrads(prev={prev_s}, g={short(loc['g'])})", where
        if name == "<lambda>" and "g" in loc and code.co_filename.endswith("numpy_vjps.py"):
            return f"vjp closure (g={short(loc['g'])})", where
        if name == "vspace" and self.tuples:
            return f"vspace({short(loc['value'])})", where
        if name == "zeros" and self.tuples:
            return f"{type(loc['self']).__name__}.zeros()", where
        if name == "mut_add" and code.co_filename.endswith("builtins.py"):
            return f"SparseObject.mut_add(A={short(loc['A'])}): add this cotangent into slot {short(loc['idx'])}", where
        if name == "toposort":
            return f"toposort(end_node={short(loc['end_node'])}): a generator, yields each node once its children are done", where
        interesting = {"make_vjp", "trace", "find_top_boxed_args", "vjp", "initialize_root", "new_root"}
        if name in interesting:
            return name, where
        return None, where

    def __call__(self, frame, event, arg):
        if event != "call":
            return None
        path = frame.f_code.co_filename
        in_core = (path in CORE_FILES or (self.verbose and path.endswith("numpy_vjps.py"))
                   or (self.tuples and path in TUPLE_FILES))
        if not in_core:
            return None
        name = frame.f_code.co_name
        if name in ("toposort", "new_trace") and id(frame) in self.seen:  # a generator resumes
            if name == "new_trace":
                print(f"{'  ' * self.depth}trace_stack: closes trace {frame.f_locals['self'].top}")
            return self.on_generator
        text, where = self.describe(frame)
        if text is None:
            return None
        if not self.verbose and not text.startswith(("new_box", "trace_stack", "backward_pass", "VJPNode")):
            return None
        if name in ("toposort", "new_trace"):
            self.seen.add(id(frame))
            print(f"{'  ' * self.depth}{text}    [{where}]")
            return self.on_generator
        print(f"{'  ' * self.depth}{text}    [{where}]")
        self.lines += 1
        self.depth += 1
        return self.on_return

    def on_generator(self, frame, event, arg):
        if event == "return" and frame.f_code.co_name == "toposort" and arg is not None and self.verbose:
            print(f"{'  ' * self.depth}toposort yields {short(arg)}: backward_pass pops its cotangent, calls its vjp")
        return self.on_generator

    def on_return(self, frame, event, arg):
        if event == "return":
            self.depth -= 1
            name = frame.f_code.co_name
            if name == "__init__" and "parent_argnums" in frame.f_locals:
                fun = frame.f_locals.get("fun")
                NODE_NAMES[id(frame.f_locals["self"])] = getattr(fun, "__name__", str(fun))
            if name in ("vspace", "zeros") and self.tuples:
                print(f"{'  ' * (self.depth + 1)}-> {short(arg)}")
            if name in ("add_outgrads",) and self.verbose:
                print(f"{'  ' * (self.depth + 1)}-> ({short(arg[0])}, mutable={arg[1]})")
            if name == "find_top_boxed_args" and self.verbose:
                boxes, top = arg[0], arg[1]
                print(f"{'  ' * (self.depth + 1)}-> top trace {top}, boxed argnums {[i for i, _ in boxes]}")
        return self.on_return


def watched(fn, verbose=True, tuples=False):
    printer = CallPrinter(verbose, tuples)
    sys.settrace(printer)
    try:
        return fn()
    finally:
        sys.settrace(None)


def baydin_x1(x1):
    x2 = 5.0
    return np.log(x1) + x1 * x2 - np.sin(x2)


def baydin(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


def main():
    print("== 1. make_vjp(f, 2.0) records the forward pass ==")
    print("f(x1) = ln(x1) + x1*5 - sin(5); x1 fans out into log and multiply\n")
    vjp, y = watched(lambda: make_vjp(baydin_x1, 2.0))
    print(f"\ny = {y:.4f}")

    print("\n== 2. vjp(1.0) runs one backward pass ==\n")
    g = watched(lambda: vjp(1.0))
    print(f"\ndy/dx1 = {g:.4f}  (1/x1 from ln plus x2 from the product, summed by add_outgrads)")

    print("\n== 3. grad(grad(f)): nested traces (only traces, boxes and backward passes shown) ==")
    print("f(x) = x**3 at x = 1.5; f'' = 6x = 9\n")
    d2 = watched(lambda: grad(grad(lambda x: x**3))(1.5), verbose=False)
    print(f"\nd2f/dx2 = {d2:.4f}")

    print("\n== 4. Two inputs: make_vjp(f, argnum=(0, 1)) packs (x1, x2) into one tuple ==")
    print("f(x1, x2) = ln(x1) + x1*x2 - sin(x2) at (2, 5); x1 and x2 each fan out\n")
    vjp2, y2 = watched(lambda: autograd.make_vjp(baydin, (0, 1))(2.0, 5.0), tuples=True)
    print(f"\ny = {y2:.4f}\n\n-- vjp(1.0): one backward pass for both inputs --\n")
    g2 = watched(lambda: vjp2(1.0), tuples=True)
    print(f"\n(dy/dx1, dy/dx2) = ({float(g2[0]):.4f}, {float(g2[1]):.4f}), returned as {short(g2)} "
          f"of {type(g2[0]).__name__}")
    print(f"grad(f, 0)(2.0, 5.0) = {grad(baydin, 0)(2.0, 5.0):.4f}, grad(f, 1)(2.0, 5.0) = "
          f"{grad(baydin, 1)(2.0, 5.0):.4f}  (one backward pass each, the other input a constant)")
    ignored = grad(lambda a, b: np.sin(a), (0, 1))(1.0, 2.0)
    print(f"grad(lambda a, b: sin(a), (0, 1))(1.0, 2.0) = ({float(ignored[0]):.4f}, {float(ignored[1]):.4f}): "
          "the zero for b comes from TupleVSpace.zeros()")


if __name__ == "__main__":
    main()
