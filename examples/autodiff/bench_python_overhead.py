"""Per-op overhead from Python: a chain of N small adds (16 floats), timed forward only, through
make_vjp and its VJP, and through requires_grad_ + backward(), against PyTorch when it imports.

    python examples/autodiff/bench_python_overhead.py [--n 1000] [--repeats 9] [--ember-site DIR]

--ember-site appends a folder holding the installed ember package to sys.path, so that another
environment's python (the peer venv with torch) can import the ember built into build/py-venv.
"""
import argparse
import os
import platform
import statistics
import sys
import time


def median_time(fn, repeats):
    fn()  # warm-up: allocator caches, first-call costs
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def ember_cases(n):
    import ember
    c = ember.full([16], 0.5)
    x0 = ember.randn([16])

    def chain(x):
        for _ in range(n):
            x = x + c
        return x

    def forward():
        with ember.no_grad():
            chain(x0)

    def vjp():
        y, f = ember.make_vjp(chain, x0)
        f(ember.ones_like(y))

    def backward():
        x = x0.detach().clone().requires_grad_()
        chain(x).sum().backward()

    return {"forward (no grad)": forward, "make_vjp + vjp": vjp, "requires_grad + backward": backward}


def torch_cases(n):
    import torch
    torch.set_num_threads(1)
    c = torch.full((16,), 0.5)
    x0 = torch.randn(16)

    def chain(x):
        for _ in range(n):
            x = x + c
        return x

    def forward():
        with torch.no_grad():
            chain(x0)

    def vjp():
        y, f = torch.func.vjp(chain, x0)
        f(torch.ones_like(y))

    def backward():
        x = x0.clone().requires_grad_()
        chain(x).sum().backward()

    return {"forward (no grad)": forward, "make_vjp + vjp": vjp, "requires_grad + backward": backward}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=1000, help="adds per chain")
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--ember-site", default=None, help="folder to append to sys.path to find ember")
    a = p.parse_args()
    if a.n < 1 or a.repeats < 1:
        p.error("--n and --repeats must be positive")
    if a.ember_site:
        sys.path.append(os.path.abspath(a.ember_site))

    results = {}
    import ember  # noqa: F401  (fails loudly when the package is not installed)
    results["ember"] = {k: median_time(f, a.repeats) / a.n for k, f in ember_cases(a.n).items()}
    try:
        import torch
        results[f"torch {torch.__version__}"] = {k: median_time(f, a.repeats) / a.n for k, f in torch_cases(a.n).items()}
    except ImportError:
        print("(torch is not importable from this python: Ember-only numbers)")

    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"per-op time, microseconds (median of {a.repeats} chains of {a.n} adds of 16 floats); "
          f"python {platform.python_version()}, {cpu}")
    names = list(results)
    print(f"{'case':<28}" + "".join(f"{n:>22}" for n in names))
    for case in next(iter(results.values())):
        print(f"{case:<28}" + "".join(f"{results[n][case] * 1e6:>22.2f}" for n in names))


if __name__ == "__main__":
    main()
