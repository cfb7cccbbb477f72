#!/usr/bin/python3
"""GPT-2's prefill, Ember against the nanoGPT-style PyTorch model of bench_torch.py, timed in turns,
call by call, in one process (examples/common/in_turns.py).

`gpt2 bench` and `bench_torch.py` are two processes a minute or more apart, and bench_rounds.sh
takes medians over rounds of them; on a host whose speed drifts by 1.5x within a minute the rounds of one thread count read 0.81-1.12x. Here each repeat prefills the same
prompt once on each side, the order swapped from one repeat to the next. Both sides do what their
benchmarks time: the prompt's keys and values into an empty cache, and the LM head on the last
position only. Random weights at the shapes of --config (GPT-2's initialisation on both sides; the
time does not depend on the values).

With --no-cache it times one step of decoding without the cache instead, which is a forward of the
whole sequence with no cache at all, the LM head on the last position: what `gpt2 generate
--no-cache` and nanoGPT's loop (bench_torch.py) do for every token. The summary times it at 144
tokens, the middle of a 32-token decode after a 128-token prompt, because the rounds of
`gpt2 bench`, a minute apart, drift with the host.

It needs one Python with both `ember` and `torch` 2.x (`./run.sh bench-deps` puts ember into the
peer environment, `./run.sh peer-ember` brings it up to the tree after a change to the library):

    ~/.cache/ember/peer-venv/bin/python examples/gpt2/prefill_in_turns.py --threads 1 --prompt-len 128

Threads: as in examples/attention/bench_in_turns.py (both OpenMP runtimes get --threads; above one
thread OMP_WAIT_POLICY=passive, so that neither side's idle workers spin on the other's cores)."""
import argparse
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from in_turns import cpu_name, set_threads, summarise, time_in_turns  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="gpt2", choices=["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"])
    ap.add_argument("--prompt-len", type=int, default=128, help="prompt tokens prefilled in one pass")
    ap.add_argument("--threads", type=int, default=1, help="threads for both libraries")
    ap.add_argument("--no-cache", action="store_true",
                    help="time a decode step without the cache (the whole sequence, no cache) instead")
    ap.add_argument("--repeats", type=int, default=11, help="timed prefills per side")
    ap.add_argument("--wait-policy", default="", help="OMP_WAIT_POLICY for both runtimes (default: passive "
                    "above one thread, OpenMP's own at one)")
    ap.add_argument("--json", default="", help="write the result here")
    args = ap.parse_args()
    for flag, value in (("--prompt-len", args.prompt_len), ("--threads", args.threads), ("--repeats", args.repeats)):
        if value < 1:
            raise SystemExit(f"prefill_in_turns: {flag} must be at least 1, got {value}")
    if args.prompt_len > 1023:
        raise SystemExit(f"prefill_in_turns: --prompt-len must leave room for a generated token in GPT-2's "
                         f"1024 positions, got {args.prompt_len}")

    policy = set_threads(args.threads, args.wait_policy)  # before either OpenMP runtime loads
    try:
        import numpy as np
        import torch
        import ember
    except ImportError as e:
        raise SystemExit(f"prefill_in_turns: {e}; run it with a Python that has both ember and torch 2.x "
                         "(./run.sh bench-deps puts ember into ~/.cache/ember/peer-venv)")
    spec = importlib.util.spec_from_file_location("bench_torch", os.path.join(HERE, "bench_torch.py"))
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    torch.set_num_threads(args.threads)

    n_layer, n_head, n_embd = peer.PRESETS[args.config]
    tconf = peer.GPTConfig(n_layer=n_layer, n_head=n_head, n_embd=n_embd)
    tmodel = peer.GPT(tconf).eval()
    emodel = ember.models.GPT2(args.config, seed=0)
    emodel.eval()
    wte_t = ember.transpose(emodel.state_dict()["wte.weight"], 0, 1)
    plen = args.prompt_len
    ids = np.random.default_rng(0).integers(0, tconf.vocab_size, size=(1, plen))
    eids, tids = ids.tolist(), torch.from_numpy(ids)

    def ember_prefill():
        with ember.no_grad():
            cache = None if args.no_cache else emodel.new_cache(1, plen + 1)
            h = emodel.hidden(eids, cache)
            ember.matmul(h[:, plen - 1:plen], wte_t)

    def torch_prefill():
        with torch.no_grad():
            tmodel(tids, None if args.no_cache else peer.KVCache(tconf, 1, plen))

    te, tt = time_in_turns(ember_prefill, torch_prefill, args.repeats, warmup_s=0.5)
    row = {"config": args.config, "prompt_len": plen, "no_cache": args.no_cache, **summarise(te, tt)}
    what = f"decode step without the cache at {plen} tokens" if args.no_cache else f"prefill of {plen} tokens"
    print(f"{args.config} {what}, {args.threads} thread(s): Ember {row['ember_ms']:.2f} ms, "
          f"PyTorch {torch.__version__} {row['torch_ms']:.2f} ms, PyTorch/Ember {row['ratio']:.2f}x "
          f"(pairs {row['ratio_min']:.2f}-{row['ratio_max']:.2f})", flush=True)
    if args.json:
        doc = {"program": "prefill_in_turns.py", "threads": args.threads, "repeats": args.repeats,
               "wait_policy": policy or "default", "machine": cpu_name(), "torch": torch.__version__, **row}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"wrote {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
