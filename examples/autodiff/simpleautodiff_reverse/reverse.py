#!/usr/bin/env python3
"""Reverse-mode automatic differentiation on a simpleautodiff-style scalar graph.

One backward pass from the output gives the derivative of the output with respect to every input.
Run without arguments, it prints Baydin et al.'s (2018) example y = ln(x1) + x1*x2 - sin(x2) at
(x1, x2) = (2, 5): the primal trace as the graph is built, then the adjoint trace (their Table 3),
one row per edge the backward pass pushes along.

    python3 reverse.py                 # the two traces and the gradient
    python3 reverse.py --forward       # also forward mode, one pass per input, for comparison
    python3 reverse.py --json out.json # the same numbers in autodiff_trace --json's layout

The functions to read are reverse_topological_order() and reverse(); forward() is the forward mode
the course already has, written so that each pass starts from fresh tangents.
"""
import argparse
import json
import os
import sys
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodes import Node, add, fmt, log, mul, new_graph, sin, sub  # noqa: E402


# ---------------------------------------------------------------------------------------------
# Reverse mode


def reverse_topological_order(output):
    """Every node the output depends on, each listed once, output first, and every node listed
    after all of its children (the nodes that read it) that the output depends on.

    A depth-first search from the output over parent_nodes, appending a node once all its parents
    are done (post-order), gives parents before children; reversed, children before parents. The
    search keeps its own stack, so a graph deeper than Python's recursion limit is fine."""
    post_order, seen = [], {output}
    stack = [(output, 0)]  # (node, index of the next parent to look at)
    while stack:
        node, i = stack[-1]
        if i < len(node.parent_nodes):
            stack[-1] = (node, i + 1)
            parent = node.parent_nodes[i]
            if parent not in seen:
                seen.add(parent)
                stack.append((parent, 0))
        else:
            stack.pop()
            post_order.append(node)
    post_order.reverse()
    return post_order


class Push:
    """One step of the backward pass: child pushed child_adjoint * partial into parent."""

    def __init__(self, child, parent, child_adjoint, partial, before, after):
        self.child, self.parent = child, parent
        self.child_adjoint, self.partial = child_adjoint, partial
        self.before, self.after = before, after  # the parent's adjoint; before is None on the first push

    @property
    def contribution(self):
        return self.child_adjoint * self.partial


class Backward:
    """What reverse() returns: the visit order, every node's adjoint, and every push."""

    def __init__(self, output, order, adjoint, pushes):
        self.output, self.order, self.adjoint, self.pushes = output, order, adjoint, pushes

    def grad(self, inputs):
        """dy/dx for each input; 0 for an input the output does not depend on."""
        return [self.adjoint.get(x, 0.0) for x in inputs]


def reverse(output, verbose=False, out=print):
    """One backward pass from `output`: returns a Backward holding v-bar = d output / d v for every
    node v that the output depends on (and stores it in node.adjoint too).

    The output's adjoint is seeded with 1. Nodes are visited children first, so when a node is
    visited every child has already pushed into it and its adjoint is final; it then pushes
    adjoint * d(node)/d(parent) into each parent. A parent read by several children (or twice by
    one, as in mul(a, a)) receives several pushes, and they are added up."""
    order = reverse_topological_order(output)
    adjoint = {output: 1.0}  # a fresh map per pass: nothing is left over from an earlier pass
    pushes = []
    if verbose:
        out(f"{pad(bar(output.name), 3)} = {bar('y')} (the seed)\n\t= {'':<30} = 1")
    for node in order:
        g = adjoint[node]  # final: all children were visited before this node
        if verbose and node.parent_nodes:
            out(f"[visit {node.name} = {node.operator}({', '.join(p.name for p in node.parent_nodes)}), "
                f"{bar(node.name)} = {fmt(g)}]")
        for parent, partial in zip(node.parent_nodes, node.grad_wrt_parents):
            before = adjoint.get(parent)
            after = (0.0 if before is None else before) + g * partial
            adjoint[parent] = after
            push = Push(node, parent, g, partial, before, after)
            pushes.append(push)
            if verbose:
                out(push_row(push))
    for node in order:
        node.adjoint = adjoint[node]
    return Backward(output, order, adjoint, pushes)


def bar(name):
    """v5 -> v̄5: a combining macron over the first letter, Baydin's notation for an adjoint."""
    return name[0] + "\u0304" + name[1:]


def pad(s, width):
    """Left-justify counting what a terminal shows (a combining macron takes no column)."""
    shown = sum(1 for c in s if not unicodedata.combining(c))
    return s + " " * max(0, width - shown)


def push_row(p):
    """The two lines of one push, symbols then numbers, in simpleautodiff's verbose layout."""
    local = f"(d{p.child.name}/d{p.parent.name})"
    term_sym = f"{bar(p.child.name)} {local}"
    term_num = f"({fmt(p.child_adjoint)})({fmt(p.partial)})"
    if p.before is None:
        sym, num = term_sym, term_num
    else:
        sym = f"{bar(p.parent.name)} + {term_sym}"
        num = f"{fmt(p.before)} + {term_num}"
    return f"{pad(bar(p.parent.name), 3)} = {sym}\n\t= {num:<30} = {fmt(p.after)}"


# ---------------------------------------------------------------------------------------------
# Forward mode, for comparison: one pass per input


def forward_tangents(output, wrt, verbose=False, out=print):
    """One forward pass: every node's tangent d(node)/d(wrt), seeded with 1 at the input `wrt` and 0
    at every other input, pushed through the graph in topological order (parents first). Each call
    starts from fresh tangents, so passes for different inputs cannot see each other's numbers."""
    order = list(reversed(reverse_topological_order(output)))
    tangent = {}
    for node in order:
        if node.is_input():
            tangent[node] = 1.0 if node is wrt else 0.0
            continue
        tangent[node] = sum(d * tangent[p] for p, d in zip(node.parent_nodes, node.grad_wrt_parents))
        if verbose:
            sym = " + ".join(f"(d{node.name}/d{p.name})(d{p.name}/d{wrt.name})" for p in node.parent_nodes)
            num = " + ".join(f"({fmt(d)})({fmt(tangent[p])})"
                             for p, d in zip(node.parent_nodes, node.grad_wrt_parents))
            out(f"d{node.name}/d{wrt.name} = {sym}\n\t= {num:<30} = {fmt(tangent[node])}")
    return tangent


def forward(output, wrt, verbose=False, out=print):
    """d output / d wrt by one forward pass (0 when the output does not depend on wrt)."""
    return forward_tangents(output, wrt, verbose, out)[output]


# ---------------------------------------------------------------------------------------------
# Baydin et al.'s example and the command line


def baydin_example(x1=2.0, x2=5.0):
    """y = ln(x1) + x1*x2 - sin(x2), one primitive per line in the survey's order, so that the
    names match its Tables 2 and 3 (which call the inputs v-1 and v0; here they are x1 and x2)."""
    new_graph()
    a, b = Node(float(x1)), Node(float(x2))
    v1 = log(a)
    v2 = mul(a, b)
    v3 = sin(b)
    v4 = add(v1, v2)
    v5 = sub(v4, v3)
    return [a, b], v5


def baydin_index(node, inputs):
    """The survey's numbering, which autodiff_trace --json uses: inputs v_{1-n} .. v_0, then v1..."""
    if node.is_input():
        return inputs.index(node) + 1 - len(inputs)
    return int(node.name[1:])


def to_json(inputs, output, back, tangents):
    """The numbers in the layout of autodiff_trace --json (vars, visit_order, adjoint_steps)."""
    idx = lambda n: baydin_index(n, inputs)  # noqa: E731
    nodes = sorted(back.order, key=idx)
    return {
        "function": "y = ln(x1) + x1*x2 - sin(x2)",
        "y": output.value,
        "gradient": back.grad(inputs),
        "direction": [1.0] + [0.0] * (len(inputs) - 1),
        "vars": [{"index": idx(n), "op": n.operator, "args": [idx(p) for p in n.parent_nodes], "value": n.value,
                  "tangent": tangents[n], "adjoint": back.adjoint[n]} for n in nodes],
        "visit_order": [idx(n) for n in back.order],
        "adjoint_steps": [{"from": idx(p.child), "to": idx(p.parent), "child_adjoint": p.child_adjoint,
                           "partial": p.partial, "contribution": p.contribution, "after": p.after}
                          for p in back.pushes],
    }


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Reverse-mode autodiff on a simpleautodiff-style scalar graph: Baydin et al.'s "
                    "y = ln(x1) + x1*x2 - sin(x2), its primal trace and its adjoint trace (Table 3) "
                    "from one backward pass.")
    ap.add_argument("--x1", type=float, default=2.0, help="value of x1, > 0 (default 2)")
    ap.add_argument("--x2", type=float, default=5.0, help="value of x2 (default 5)")
    ap.add_argument("--forward", action="store_true",
                    help="also run forward mode, one pass per input, and print its tangent traces")
    ap.add_argument("--quiet", action="store_true", help="print only the gradient")
    ap.add_argument("--json", metavar="PATH", help="write the traces as JSON, in autodiff_trace --json's layout")
    args = ap.parse_args(argv)
    if args.x1 <= 0:
        ap.error("--x1 must be positive (ln x1)")

    verbose = not args.quiet
    if verbose:
        print(f"y = ln(x1) + x1*x2 - sin(x2) at (x1, x2) = ({fmt(args.x1)}, {fmt(args.x2)})\n")
        print("Primal trace (each node printed as it is built)")
    Node.verbose = verbose
    inputs, y = baydin_example(args.x1, args.x2)
    Node.verbose = False

    if verbose:
        print("\nAdjoint trace: one backward pass from y, children before parents")
    back = reverse(y, verbose=verbose)
    if verbose:
        print(f"\nvisit order: {', '.join(n.name for n in back.order)} "
              f"({len(back.order)} nodes, each once; {len(back.pushes)} pushes, one per edge)")
    for x, g in zip(inputs, back.grad(inputs)):
        print(f"dy/d{x.name} = {bar(x.name)} = {fmt(g)}")

    if args.forward:
        for x in inputs:
            if verbose:
                print(f"\nForward mode, a pass of its own for {x.name} (tangent 1 at {x.name}, 0 at the others)")
            print(f"forward pass for {x.name}: dy/d{x.name} = {fmt(forward(y, x, verbose=verbose))}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(to_json(inputs, y, back, forward_tangents(y, inputs[0])), f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
