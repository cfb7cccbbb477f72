#!/usr/bin/env python3
"""Checks reverse.py's backward pass (plain Python 3, standard library only).

  1. Baydin's example against the closed-form gradient, and against Ember: autodiff_trace --json
     (given with --ember) at (2, 5) and at a few random points must report the same graph (ops,
     arguments, values), the same adjoint for every node, the same local partial and contribution
     on every edge, and a backward pass that is a valid reverse topological order; reverse.py's own
     --json output must agree with it too.
  2. Random expressions (trees of add/sub/mul/log/sin over 2 or 3 inputs, and as many graphs that
     reuse intermediate results, so that fan-out happens inside the graph and not only at the
     inputs): the gradient from one backward pass against central finite differences and against
     forward mode (one pass per input); every node visited once, after all of its children; one
     push per edge.
  3. The checks can fail: two broken backward passes (one that overwrites instead of adding on
     fan-out, one that visits breadth-first from the output) must each be caught, and a wrong local
     derivative must be caught by the finite differences (forward and reverse mode agree on it).

Usage: test_reverse.py [--ember PATH_TO_autodiff_trace] [--count 50] [--seed 21]
Exit status 0 when every check passed; 1 otherwise (each failure is printed).
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
from collections import deque

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nodes  # noqa: E402
import reverse as rev  # noqa: E402

UNARY = {"log": math.log, "sin": math.sin}
BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}
BUILD = {"add": nodes.add, "sub": nodes.sub, "mul": nodes.mul, "log": nodes.log, "sin": nodes.sin}


class Checker:
    def __init__(self, quiet=False):
        self.failures, self.checks, self.quiet = [], 0, quiet

    def that(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures.append(what)
            if not self.quiet:
                print("FAIL:", what)
        return ok

    def close(self, a, b, what, rel=1e-12, abs_=1e-12):
        return self.that(abs(a - b) <= abs_ + rel * max(abs(a), abs(b)), f"{what}: {a!r} vs {b!r}")


# ---------------------------------------------------------------------------------------------
# Random expressions: nested tuples ("x", i), (op, e) or (op, e1, e2). Graphs that reuse a
# subexpression reuse the same tuple object, and building the Node graph memoises by identity, so a
# reused tuple becomes one node with several children.


def evaluate(e, xs, memo=None):
    memo = {} if memo is None else memo
    if id(e) in memo:
        return memo[id(e)]
    if e[0] == "x":
        v = xs[e[1]]
    elif e[0] in UNARY:
        v = UNARY[e[0]](evaluate(e[1], xs, memo))
    else:
        v = BINARY[e[0]](evaluate(e[1], xs, memo), evaluate(e[2], xs, memo))
    memo[id(e)] = v
    return v


def build(e, inputs, memo=None):
    memo = {} if memo is None else memo
    if id(e) not in memo:
        if e[0] == "x":
            memo[id(e)] = inputs[e[1]]
        else:
            memo[id(e)] = BUILD[e[0]](*(build(a, inputs, memo) for a in e[1:]))
    return memo[id(e)]


def acceptable(e, xs):
    """Values of moderate size, and the argument of every log at least 0.2 (so that ln stays smooth
    over the finite-difference step and the third derivative that sets its error stays small)."""
    if e[0] == "log" and evaluate(e[1], xs) < 0.2:
        return False
    return abs(evaluate(e, xs)) <= 50


def random_tree(rng, xs, depth):
    leaf = ("x", rng.randrange(len(xs)))
    if depth == 0 or rng.random() < 0.25:
        return leaf
    for _ in range(20):
        op = rng.choice(["add", "sub", "mul", "log", "sin"])
        args = [random_tree(rng, xs, depth - 1) for _ in range(1 if op in UNARY else 2)]
        e = (op, *args)
        if acceptable(e, xs):
            return e
    return leaf


def random_dag(rng, xs, n_ops):
    """Each new operation reads earlier results (or inputs) at random, so results fan out."""
    pool = [("x", i) for i in range(len(xs))]
    for _ in range(n_ops):
        for _ in range(50):
            op = rng.choice(["add", "sub", "mul", "log", "sin"])
            # favour recent results, so that the graph is deep as well as shared
            args = [pool[max(0, len(pool) - 1 - int(rng.expovariate(0.5)))] if rng.random() < 0.7
                    else rng.choice(pool) for _ in range(1 if op in UNARY else 2)]
            e = (op, *args)
            if acceptable(e, xs):
                pool.append(e)
                break
    # the output combines the last two results, so that most of the pool is reachable
    out = ("add", pool[-1], pool[-2]) if len(pool) > len(xs) + 1 else pool[-1]
    return out if acceptable(out, xs) else pool[-1]


def count_ops(e, seen=None):
    """Distinct operations (a reused subexpression counts once)."""
    seen = set() if seen is None else seen
    if e[0] == "x" or id(e) in seen:
        return 0
    seen.add(id(e))
    return 1 + sum(count_ops(a, seen) for a in e[1:])


def variables(e):
    return {e[1]} if e[0] == "x" else set().union(*(variables(a) for a in e[1:]))


def central_difference(e, xs, i):
    h = 1e-5 * max(1.0, abs(xs[i]))
    up, down = list(xs), list(xs)
    up[i] += h
    down[i] -= h
    return (evaluate(e, up) - evaluate(e, down)) / (2 * h)


def graph_nodes(output):
    """Every node the output depends on, found independently of reverse.py (a plain stack walk),
    in the order found (a list, so that every run checks in the same order)."""
    seen, found, stack = {output}, [output], [output]
    while stack:
        for p in stack.pop().parent_nodes:
            if p not in seen:
                seen.add(p)
                found.append(p)
                stack.append(p)
    return found


def check_pass_structure(c, output, back, label):
    """Each node once; each node after every child it has in the graph; one push per edge."""
    members = graph_nodes(output)
    order = back.order
    c.that(len(order) == len(set(order)), f"{label}: a node visited twice")
    c.that(set(order) == set(members), f"{label}: the pass visits {len(set(order))} nodes, the graph has {len(members)}")
    pos = {n: k for k, n in enumerate(order)}
    for n in members:
        for p in n.parent_nodes:
            if p in pos and n in pos and not c.that(pos[n] < pos[p], f"{label}: {p.name} visited before its child {n.name}"):
                return
    edges = sum(len(n.parent_nodes) for n in members)
    c.that(len(back.pushes) == edges, f"{label}: {len(back.pushes)} pushes for {edges} edges")


def check_random(c, reverse_fn, count, seed, quiet=False):
    rng = random.Random(seed)
    stats = {"trees": 0, "graphs": 0, "inner_fanout": 0, "unused_input": 0, "edges": 0, "ops": []}
    for k in range(count):
        n_in = 2 + k % 2
        xs = [rng.uniform(0.5, 3.0) for _ in range(n_in)]
        for _ in range(100):  # at least three operations and, for trees, every input used
            if k < count // 2:
                e = random_tree(rng, xs, depth=4)
            else:
                e = random_dag(rng, xs, n_ops=rng.randint(4, 10))
            used = variables(e)
            if count_ops(e) >= 3 and (k >= count // 2 or len(used) == n_in):
                break
        stats["trees" if k < count // 2 else "graphs"] += 1
        stats["ops"].append(count_ops(e))
        nodes.new_graph()
        inputs = [nodes.Node(v) for v in xs]
        y = build(e, inputs)
        c.close(y.value, evaluate(e, xs), f"expression {k}: value")
        back = reverse_fn(y)
        grad = back.grad(inputs)
        label = f"expression {k} at {[round(v, 4) for v in xs]}"
        members = graph_nodes(y)
        stats["edges"] += sum(len(n.parent_nodes) for n in members)
        if any(len(n.child_nodes) > 1 and not n.is_input() for n in members):
            stats["inner_fanout"] += 1
        if any(x not in set(members) for x in inputs):
            stats["unused_input"] += 1
        for i, x in enumerate(inputs):
            fd = central_difference(e, xs, i)
            c.close(grad[i], fd, f"{label}: dy/d{x.name} reverse vs central difference", rel=1e-6, abs_=1e-6)
            c.close(grad[i], rev.forward(y, x), f"{label}: dy/d{x.name} reverse vs forward mode", rel=1e-12, abs_=1e-12)
        check_pass_structure(c, y, back, label)
    if not quiet:
        print(f"random expressions: {stats['trees']} trees and {stats['graphs']} shared graphs, "
              f"{min(stats['ops'])} to {max(stats['ops'])} operations each, {stats['edges']} edges in all; {stats['inner_fanout']} with an intermediate result read more than once, "
              f"{stats['unused_input']} with an input the output ignores (its derivative must be 0)")


# ---------------------------------------------------------------------------------------------
# Baydin's example


def check_baydin_closed_form(c, reverse_fn, x1=2.0, x2=5.0):
    inputs, y = rev.baydin_example(x1, x2)
    back = reverse_fn(y)
    g = back.grad(inputs)
    c.close(y.value, math.log(x1) + x1 * x2 - math.sin(x2), "Baydin y")
    c.close(g[0], 1 / x1 + x2, "Baydin dy/dx1 = 1/x1 + x2")
    c.close(g[1], x1 - math.cos(x2), "Baydin dy/dx2 = x1 - cos x2")
    check_pass_structure(c, y, back, "Baydin")
    return inputs, y, back


def run_ember(ember, x1, x2):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        r = subprocess.run([ember, "--x1", repr(x1), "--x2", repr(x2), "--table", "adjoint", "--json", path],
                           capture_output=True, text=True, encoding="utf-8")
        if r.returncode != 0:
            raise RuntimeError(f"{ember} failed ({r.returncode}): {r.stderr}")
        with open(path) as f:
            return json.load(f)


def is_reverse_topological(order, args):
    """Every node after each of its children: order lists indices, args maps index -> parents."""
    pos = {n: k for k, n in enumerate(order)}
    return len(pos) == len(order) and all(pos[n] < pos[p] for n in order for p in args[n])


def check_against_ember_json(c, ember_json, inputs, y, back, label):
    mine = rev.to_json(inputs, y, back, rev.forward_tangents(y, inputs[0]))
    theirs = {v["index"]: v for v in ember_json["vars"]}
    ours = {v["index"]: v for v in mine["vars"]}
    c.that(sorted(theirs) == sorted(ours), f"{label}: Ember numbers nodes {sorted(theirs)}, we {sorted(ours)}")
    for i in sorted(set(theirs) & set(ours)):
        t, o = theirs[i], ours[i]
        c.that(t["op"] == o["op"] and t["args"] == o["args"],
               f"{label}: v{i} is {t['op']}{t['args']} in Ember, {o['op']}{o['args']} here")
        c.close(o["value"], t["value"], f"{label}: value of v{i}", rel=1e-12)
        c.close(o["adjoint"], t["adjoint"], f"{label}: adjoint of v{i}", rel=1e-12)
    for i, g in enumerate(mine["gradient"]):
        c.close(g, ember_json["gradient"][i], f"{label}: gradient[{i}]", rel=1e-12)
    # Edge by edge: the same local partial and the same contribution on each (child, parent) edge.
    t_edges = {(s["from"], s["to"]): s for s in ember_json["adjoint_steps"]}
    o_edges = {(s["from"], s["to"]): s for s in mine["adjoint_steps"]}
    c.that(set(t_edges) == set(o_edges), f"{label}: pushed edges differ: Ember {sorted(t_edges)}, here {sorted(o_edges)}")
    for edge in sorted(set(t_edges) & set(o_edges)):
        c.close(o_edges[edge]["partial"], t_edges[edge]["partial"], f"{label}: partial on edge {edge}", rel=1e-12)
        c.close(o_edges[edge]["contribution"], t_edges[edge]["contribution"], f"{label}: push on edge {edge}", rel=1e-12)
    # Both passes must be valid reverse topological orders of that graph; they need not be the same
    # one, but when they are, the running sums ("after") must agree step by step too.
    args = {v["index"]: v["args"] for v in ember_json["vars"]}
    c.that(is_reverse_topological(ember_json["visit_order"], args), f"{label}: Ember's visit order is not reverse topological")
    c.that(is_reverse_topological(mine["visit_order"], args), f"{label}: our visit order is not reverse topological")
    same_order = mine["visit_order"] == ember_json["visit_order"]
    if same_order:
        for k, (o, t) in enumerate(zip(mine["adjoint_steps"], ember_json["adjoint_steps"])):
            c.close(o["after"], t["after"], f"{label}: running adjoint after step {k}", rel=1e-12)
    return same_order


def check_cli(c, ember_json):
    """reverse.py as a program: --help, the printed trace, and --json against Ember's."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    script = os.path.join(HERE, "reverse.py")
    r = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, env=env)
    c.that(r.returncode == 0 and "--json" in r.stdout, "reverse.py --help")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mine.json")
        r = subprocess.run([sys.executable, script, "--json", path], capture_output=True, text=True,
                           encoding="utf-8", env=env)
        c.that(r.returncode == 0, f"reverse.py exited {r.returncode}: {r.stderr}")
        out = r.stdout
        # the rows where the two fan-outs are summed, and the two answers
        for row in ["x\u03042 + v\u03042 (dv2/dx2)", "= -0.284 + (1)(2)", "x\u03041 + v\u03041 (dv1/dx1)",
                    "= 5 + (1)(0.5)", "dy/dx1 = x\u03041 = 5.5", "dy/dx2 = x\u03042 = 1.716"]:
            c.that(row in out, f"reverse.py's trace lacks {row!r}")
        if ember_json is not None and os.path.exists(path):
            with open(path) as f:
                mine = json.load(f)
            c.that(mine["visit_order"] == ember_json["visit_order"],
                   f"reverse.py --json visit order {mine['visit_order']} vs Ember's {ember_json['visit_order']}")
            for i, g in enumerate(mine["gradient"]):
                c.close(g, ember_json["gradient"][i], f"reverse.py --json gradient[{i}]", rel=1e-12)
            c.that(len(mine["adjoint_steps"]) == len(ember_json["adjoint_steps"]), "reverse.py --json: step count")


# ---------------------------------------------------------------------------------------------
# Two broken backward passes that the checks above must catch


def reverse_overwrites(output):
    """Broken: the last push into a parent replaces the earlier ones instead of adding to them."""
    order = rev.reverse_topological_order(output)
    adjoint, pushes = {output: 1.0}, []
    for node in order:
        for parent, partial in zip(node.parent_nodes, node.grad_wrt_parents):
            before = adjoint.get(parent)
            adjoint[parent] = adjoint[node] * partial
            pushes.append(rev.Push(node, parent, adjoint[node], partial, before, adjoint[parent]))
    return rev.Backward(output, order, adjoint, pushes)


def reverse_breadth_first(output):
    """Broken: visits nodes breadth-first from the output, so a node can be visited (and push its
    adjoint on) before all of its children have pushed into it."""
    order, seen, queue = [], {output}, deque([output])
    while queue:
        n = queue.popleft()
        order.append(n)
        for p in n.parent_nodes:
            if p not in seen:
                seen.add(p)
                queue.append(p)
    adjoint, pushes = {output: 1.0}, []
    for node in order:
        for parent, partial in zip(node.parent_nodes, node.grad_wrt_parents):
            before = adjoint.get(parent)
            adjoint[parent] = (before or 0.0) + adjoint[node] * partial
            pushes.append(rev.Push(node, parent, adjoint[node], partial, before, adjoint[parent]))
    return rev.Backward(output, order, adjoint, pushes)


def sin_with_wrong_sign(a):
    """Broken rule: sin whose local derivative has the wrong sign."""
    n = nodes.sin(a)
    n.grad_wrt_parents = [-math.cos(a.value)]
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ember", help="path to Ember's autodiff_trace (its --json output is compared)")
    ap.add_argument("--count", type=int, default=50, help="random expressions (default 50)")
    ap.add_argument("--seed", type=int, default=21)
    args = ap.parse_args()
    c = Checker()

    inputs, y, back = check_baydin_closed_form(c, rev.reverse)
    print(f"Baydin (2, 5): dy/dx1 = {back.grad(inputs)[0]!r}, dy/dx2 = {back.grad(inputs)[1]!r}")
    ember_json = None
    if args.ember:
        rng = random.Random(args.seed)
        points = [(2.0, 5.0)] + [(round(rng.uniform(0.2, 4.0), 6), round(rng.uniform(-6.0, 6.0), 6)) for _ in range(3)]
        for x1, x2 in points:
            ej = run_ember(args.ember, x1, x2)
            if ember_json is None:
                ember_json = ej
            ins, yy, bb = check_baydin_closed_form(c, rev.reverse, x1, x2)
            same = check_against_ember_json(c, ej, ins, yy, bb, f"Ember at ({x1}, {x2})")
            print(f"Ember's autodiff_trace at ({x1}, {x2}): gradient {ej['gradient']}, "
                  f"visit order {'the same as' if same else 'different from'} ours")
    else:
        print("no --ember given: the comparison with autodiff_trace --json is skipped")
    check_cli(c, ember_json)
    check_random(c, rev.reverse, args.count, args.seed)

    # The same checks on broken passes must fail.
    for broken in (reverse_overwrites, reverse_breadth_first):
        b = Checker(quiet=True)
        check_baydin_closed_form(b, broken)
        check_random(b, broken, args.count, args.seed, quiet=True)
        caught = len(b.failures)
        c.that(caught > 0, f"the checks did not catch the broken pass {broken.__name__}")
        print(f"broken pass {broken.__name__}: caught by {caught} of {b.checks} checks"
              + (f" (first: {b.failures[0]})" if b.failures else ""))
    # A wrong local derivative fools forward and reverse mode alike (both read grad_wrt_parents);
    # only the finite differences can see it.
    BUILD["sin"] = sin_with_wrong_sign
    try:
        b = Checker(quiet=True)
        check_random(b, rev.reverse, args.count, args.seed, quiet=True)
    finally:
        BUILD["sin"] = nodes.sin
    by_fd = sum("central difference" in f for f in b.failures)
    c.that(by_fd > 0 and by_fd == len(b.failures), "a wrong d(sin) should fail the finite-difference checks only")
    print(f"a wrong local derivative (d sin x = -cos x): caught by {by_fd} finite-difference checks, "
          f"{len(b.failures) - by_fd} others")

    print(f"{c.checks} checks, {len(c.failures)} failed")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
