"""A scalar computational graph with the same data model as the course project simpleautodiff.

Each Node is one number of an evaluation trace. It is built by one of the primitives below, which
compute the value *and* the local partial derivatives of the new node with respect to each of its
arguments, at the arguments' current values. So when the graph is finished, every edge already
carries its local derivative; differentiation is then only a matter of walking the graph and
multiplying (the chain rule), forwards from an input or backwards from the output.

Attributes (the names follow simpleautodiff, so that a reverse pass written against this module
reads the same attributes as one added to the course's simpleautodiff.py):

    value             the number this node holds
    parent_nodes      the nodes it was computed from, in argument order; empty for an input.
                      mul(a, a) lists a twice: there are two edges, and each carries a derivative
    grad_wrt_parents  the local partials d(self)/d(parent_nodes[i]), one per entry of parent_nodes
    child_nodes       the nodes that read this one, one entry per edge (mul(a, a) appends twice)
    operator          "input", "add", "sub", "mul", "log" or "sin"
    name              "x1", "x2", ... for inputs, "v1", "v2", ... for the rest, in creation order
                      (new_graph() starts the numbering again)

Nothing here differentiates: forward and reverse passes live in reverse.py.
"""
import math

__all__ = ["Node", "new_graph", "add", "sub", "mul", "log", "sin", "fmt"]


def fmt(x):
    """A number the way the traces print it: at most three decimals, no trailing zeros."""
    s = f"{x:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


class Node:
    verbose = False  # when True, every node prints its primal-trace row as it is built
    _next = {"input": 1, "op": 1}

    def __init__(self, value, parent_nodes=(), grad_wrt_parents=(), operator="input", name=None):
        if len(parent_nodes) != len(grad_wrt_parents):
            raise ValueError("one local derivative per parent is needed")
        self.value = value
        # Fresh lists per node: nothing is shared between two inputs.
        self.parent_nodes = list(parent_nodes)
        self.grad_wrt_parents = list(grad_wrt_parents)
        self.child_nodes = []
        self.operator = operator
        kind = "input" if operator == "input" else "op"
        if name is None:
            name = ("x%d" if kind == "input" else "v%d") % Node._next[kind]
            Node._next[kind] += 1
        self.name = name
        for p in self.parent_nodes:
            p.child_nodes.append(self)
        if Node.verbose:
            print(self.primal_row())

    def is_input(self):
        return self.operator == "input"

    def primal_row(self):
        if self.is_input():
            return f"{self.name:<3}= {'input':<35}= {fmt(self.value)}"
        names = ", ".join(p.name for p in self.parent_nodes)
        values = ", ".join(fmt(p.value) for p in self.parent_nodes)
        sym = f"{self.operator}({names})"
        num = f"{self.operator}({values})"
        return f"{self.name:<3}= {sym:<12} = {num:<20}= {fmt(self.value)}"

    def __repr__(self):
        return f"Node({self.name}={fmt(self.value)})"


def new_graph():
    """Start numbering again at x1 and v1 (the next nodes belong to a new trace)."""
    Node._next = {"input": 1, "op": 1}


def _as_node(a):
    if not isinstance(a, Node):
        raise TypeError(f"expected a Node, got {type(a).__name__} (make constants with Node(value))")
    return a


# The primitives. Each returns a new node holding the value and the local partial derivative with
# respect to each argument, evaluated now, while the arguments' values are at hand.

def add(a, b):
    a, b = _as_node(a), _as_node(b)
    return Node(a.value + b.value, (a, b), (1.0, 1.0), "add")


def sub(a, b):
    a, b = _as_node(a), _as_node(b)
    return Node(a.value - b.value, (a, b), (1.0, -1.0), "sub")


def mul(a, b):
    a, b = _as_node(a), _as_node(b)
    # d(ab)/da = b and d(ab)/db = a: each factor's partial is the *other* factor's value.
    return Node(a.value * b.value, (a, b), (b.value, a.value), "mul")


def log(a):
    a = _as_node(a)
    if a.value <= 0:
        raise ValueError(f"log of {a.value} (node {a.name}): the argument must be positive")
    return Node(math.log(a.value), (a,), (1.0 / a.value,), "log")


def sin(a):
    a = _as_node(a)
    return Node(math.sin(a.value), (a,), (math.cos(a.value),), "sin")
