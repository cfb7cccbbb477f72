"""Compares Ember's values and gradients of issue 16's ops (printed by build/bin/ops_parity) with
PyTorch's on the same inputs; exits 1 on any difference above 1e-12 + 1e-10 |reference|.

    ~/.cache/ember/peer-venv/bin/python examples/ops_parity/ops_parity.py [--ember build/bin/ops_parity]
"""
import argparse
import math
import subprocess
import sys

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def det(shape, a):
    n = math.prod(shape)
    return torch.tensor([math.sin(a * (i + 1)) * 2 for i in range(n)]).reshape(shape)


def references():
    out = {}
    def show(name, t):
        out[name] = torch.as_tensor(t).detach().reshape(-1).tolist()

    def g(f, x):
        x = x.clone().requires_grad_()
        f(x).backward()
        return x.grad

    logits = det((5, 4), 0.7); tg = torch.tensor([3, 0, 7, 2, 1])
    ce = lambda v: F.cross_entropy(v, tg, ignore_index=7, label_smoothing=0.2)
    show("ce_ls_ign", ce(logits)); show("ce_ls_ign_grad", g(ce, logits))
    show("ce_none", F.cross_entropy(logits, tg, ignore_index=7, label_smoothing=0.2, reduction="none"))
    a, b = det((3, 4), 0.3), det((3, 4), 0.9)
    show("smooth_l1", F.smooth_l1_loss(a, b, reduction="none", beta=0.5))
    p, t01 = torch.sigmoid(a), torch.sigmoid(b)
    show("bce", F.binary_cross_entropy(p, t01, reduction="sum"))
    show("bcel", F.binary_cross_entropy_with_logits(a * 30, t01))
    show("bcel_grad", g(lambda v: F.binary_cross_entropy_with_logits(v, t01), a * 30))
    show("nll", F.nll_loss(F.log_softmax(logits, -1), tg, ignore_index=7))
    show("var0", a.var(1, correction=0)); show("std2", a.std(0, correction=2))
    show("norm1", torch.linalg.vector_norm(a, 1, dim=1)); show("norminf", torch.linalg.vector_norm(a, math.inf, dim=0)); show("norm3", torch.linalg.vector_norm(a, 3))
    show("softplus", F.softplus(a * 5, beta=2, threshold=3))
    show("elu", F.elu(a, 1.5)); show("lrelu", F.leaky_relu(a, 0.1)); show("silu", F.silu(a))
    c = torch.tensor([-1, 0, 0.5, 1, 2.])
    show("clamp_grad", g(lambda v: v.clamp(0, 1).sum(), c))
    m1, m2 = torch.tensor([1., 2, 3]), torch.tensor([1., 5, 0])
    show("max_grad", g(lambda v: torch.maximum(v, m2).sum(), m1))
    pz = torch.tensor([2., 3, 4, 2, 0, 5, 0, 7, 0]).reshape(3, 3)
    show("prod_grad", g(lambda v: v.prod(1).sum(), pz))
    show("einsum", torch.einsum("bij,bj->bi", det((2, 3, 4), 0.2), det((2, 4), 0.4)))
    x24 = det((2, 4), 0.5)
    show("pad_reflect", F.pad(x24[None, None], (2, 3, 1, 1), mode="reflect")[0, 0])
    show("roll", det((3, 4), 0.5).roll(-5, 1)); show("repeat", det((2, 3), 0.5).repeat(2, 1, 2))
    show("tril", det((3, 4), 0.5).tril(-1)); show("triu", det((3, 4), 0.5).triu(1))
    show("linspace", torch.linspace(-1, 2, 7))
    show("gather", det((3, 5), 0.3).gather(1, torch.tensor([4, 4, 0, 1, 3, 2]).reshape(3, 2)))
    show("min_grad", g(lambda v: v.amin(1).sum(), torch.tensor([[2., -1, 3, -1]])))
    kink = torch.tensor([-1., 0, 1])
    show("lrelu_grad0", g(lambda v: F.leaky_relu(v, 0.1).sum(), kink))
    show("elu_grad0", g(lambda v: F.elu(v, 1.5).sum(), kink))
    show("abs_grad0", g(lambda v: v.abs().sum(), kink))
    show("sl1_edge_grad", g(lambda v: F.smooth_l1_loss(v, torch.zeros(3), reduction="sum", beta=1.0), kink))
    show("bcel0_grad", g(lambda v: F.binary_cross_entropy_with_logits(v, torch.full((3,), 0.3)), kink * 0))
    show("clamp_min_grad", g(lambda v: v.clamp(min=0).sum(), kink))
    show("hess", torch.autograd.functional.hessian(lambda v: (v.exp() * v.sin()).sum() + v.sum() * (v * v).sum(), det((4,), 0.3)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ember", default="build/bin/ops_parity", help="the ops_parity program")
    args = ap.parse_args()
    ref = references()
    bad = 0
    lines = subprocess.run([args.ember], check=True, capture_output=True, text=True).stdout.splitlines()
    for line in lines:
        name, *vals = line.split()
        got, want = [float(v) for v in vals], ref[name]
        ok = len(got) == len(want) and all(abs(x - y) <= 1e-12 + 1e-10 * abs(y) for x, y in zip(got, want))
        err = max((abs(x - y) for x, y in zip(got, want)), default=0.0)
        print(f"{'ok ' if ok else 'BAD'} {name:15s} {len(got):3d} values, max |ember - torch| = {err:.1e}")
        if not ok:
            print("    ember:", got[:8], "\n    torch:", want[:8])
            bad += 1
    missing = sorted(set(ref) - {line.split()[0] for line in lines})
    if missing:
        print("no Ember line for:", missing)
    print(f"{len(lines) - bad} of {len(lines)} cases match PyTorch {torch.__version__}")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
