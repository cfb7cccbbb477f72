#!/usr/bin/python3
"""GGUF files of a GPT-2 Hugging Face folder for examples/gpt2/bench_weights.py --gguf: F32 and F16
with llama.cpp's convert_hf_to_gguf.py, Q8_0 from the F32 file with llama-quantize (both from
scripts/build_llama_cpp.sh). Without --model it first writes a random-weight GPT-2 124M folder
(Ember's `GPT2("gpt2", seed=0).save_pretrained`, plus GPT-2's vocab.json and merges.txt from
--tokenizer) into OUT/gpt2-random. A file newer than what it is made from is kept; each is written
under a temporary name and renamed when complete, so an interrupted run leaves nothing half-made.

    scripts/make_gguf.py OUT                 # OUT/gpt2-random, OUT/model-{f32,f16,q8_0}.gguf
    scripts/make_gguf.py OUT --model DIR     # a folder of your own (with vocab.json, merges.txt)

The converter runs in --python (default: the peer environment ~/.cache/ember/peer-venv, which
needs torch, transformers and llama.cpp's gguf-py: `./run.sh bench-deps` installs them)."""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
CACHE = os.environ.get("EMBER_LLAMA_CPP_CACHE", os.path.expanduser("~/.cache/ember/llama.cpp"))
PEER_PYTHON = os.path.join(os.environ.get("EMBER_PEER_VENV", os.path.expanduser("~/.cache/ember/peer-venv")),
                           "bin", "python")
TOKENIZER_FILES = ("vocab.json", "merges.txt")
OUTPUTS = {"f32": "model-f32.gguf", "f16": "model-f16.gguf", "q8_0": "model-q8_0.gguf"}
VERSION = "0.3.36"  # the llama-cpp-python sdist scripts/build_llama_cpp.sh builds by default

WRITE_RANDOM = """import sys, ember
ember.models.GPT2("gpt2", seed=0).save_pretrained(sys.argv[1])
"""


def up_to_date(target, source):
    """True when target exists and is at least as new as source (which must exist)."""
    return os.path.isfile(target) and os.path.getmtime(target) >= os.path.getmtime(source)


def plan(out, model, tokenizer, force=False):
    """The steps to run, in order, as (name, target, action) with action "run" or "skip". `model` is
    None for the random folder OUT/gpt2-random. Steps whose source a previous step will remake run."""
    steps = []
    own = model is None
    folder = os.path.join(out, "gpt2-random") if own else model
    weights = os.path.join(folder, "model.safetensors")
    remade = False
    if own:
        have = os.path.isfile(weights) and os.path.isfile(os.path.join(folder, "config.json"))
        remade = force or not have
        steps.append(("random-model", folder, "run" if remade else "skip"))
        have_tok = all(os.path.isfile(os.path.join(folder, n)) for n in TOKENIZER_FILES)
        steps.append(("tokenizer", folder, "run" if force or not have_tok else "skip"))
    for fmt in ("f32", "f16"):
        target = os.path.join(out, OUTPUTS[fmt])
        fresh = not remade and not force and os.path.isfile(weights) and up_to_date(target, weights)
        steps.append((fmt, target, "skip" if fresh else "run"))
    f32 = os.path.join(out, OUTPUTS["f32"])
    q8 = os.path.join(out, OUTPUTS["q8_0"])
    f32_remade = steps[-2][2] == "run"
    fresh = not f32_remade and not force and up_to_date(q8, f32)
    steps.append(("q8_0", q8, "skip" if fresh else "run"))
    return steps


def check_args(ap, args):
    src = args.llama_cpp
    if not os.path.isfile(os.path.join(src, "convert_hf_to_gguf.py")):
        ap.error(f"--llama-cpp {src} has no convert_hf_to_gguf.py; run scripts/build_llama_cpp.sh or pass the "
                 "vendor/llama.cpp folder of a llama-cpp-python sdist")
    if not os.access(args.quantize, os.X_OK):
        ap.error(f"--quantize {args.quantize} is not an executable; run scripts/build_llama_cpp.sh")
    if not os.access(args.python, os.X_OK):
        ap.error(f"--python {args.python} is not an executable; run ./run.sh bench-deps")
    if args.model is not None:
        if not os.path.isfile(os.path.join(args.model, "model.safetensors")):
            ap.error(f"--model {args.model} has no model.safetensors (expected a Hugging Face GPT-2 folder)")
        missing = [n for n in TOKENIZER_FILES if not os.path.isfile(os.path.join(args.model, n))]
        if missing:
            ap.error(f"--model {args.model} lacks {' and '.join(missing)}: the converter needs GPT-2's tokenizer")
    else:
        missing = [n for n in TOKENIZER_FILES if not os.path.isfile(os.path.join(args.tokenizer, n))]
        if missing:
            ap.error(f"--tokenizer {args.tokenizer} lacks {' and '.join(missing)} (GPT-2's BPE files)")
    if args.model is not None and os.path.abspath(args.model) == os.path.abspath(args.out):
        ap.error("OUT must not be the --model folder")


def run(cmd):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)


def make(step, target, args, folder):
    tmp = target + ".part"
    if step == "random-model":
        if os.path.isdir(tmp):
            shutil.rmtree(tmp)
        run([args.python, "-c", WRITE_RANDOM, tmp])
        os.makedirs(target, exist_ok=True)
        for name in os.listdir(tmp):  # config.json, model.safetensors
            os.replace(os.path.join(tmp, name), os.path.join(target, name))
        os.rmdir(tmp)
    elif step == "tokenizer":
        for name in TOKENIZER_FILES:
            shutil.copyfile(os.path.join(args.tokenizer, name), os.path.join(target, name + ".part"))
            os.replace(os.path.join(target, name + ".part"), os.path.join(target, name))
    elif step in ("f32", "f16"):
        run([args.python, os.path.join(args.llama_cpp, "convert_hf_to_gguf.py"), folder, "--outtype", step,
             "--outfile", tmp])
        os.replace(tmp, target)
    elif step == "q8_0":
        run([args.quantize, os.path.join(args.out, OUTPUTS["f32"]), tmp, "Q8_0"])
        os.replace(tmp, target)
    else:
        raise ValueError(f"unknown step {step}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="folder for model-f32.gguf, model-f16.gguf, model-q8_0.gguf (and gpt2-random)")
    ap.add_argument("--model", help="Hugging Face GPT-2 folder (default: write random GPT-2 124M weights)")
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "..", "shared", "data", "gpt2-bpe"),
                    help="folder with GPT-2's vocab.json and merges.txt, for the random model (default: %(default)s)")
    ap.add_argument("--llama-cpp", default=os.path.join(CACHE, f"llama_cpp_python-{VERSION}", "vendor", "llama.cpp"),
                    help="llama.cpp sources with convert_hf_to_gguf.py (default: %(default)s)")
    ap.add_argument("--quantize", default=os.path.join(CACHE, "bin", "llama-quantize"),
                    help="the llama-quantize program (default: %(default)s)")
    ap.add_argument("--python", default=PEER_PYTHON, help="python with torch, transformers, gguf (and ember for "
                    "the random model) (default: %(default)s)")
    ap.add_argument("--plan", action="store_true", help="print the steps (run or skip) and stop")
    ap.add_argument("--force", action="store_true", help="make every file again")
    args = ap.parse_args()
    check_args(ap, args)
    folder = args.model if args.model is not None else os.path.join(args.out, "gpt2-random")
    steps = plan(args.out, args.model, args.tokenizer, args.force)
    for step, target, action in steps:
        print(f"{step}: {action} {target}", flush=True)
        if action == "run" and not args.plan:
            os.makedirs(args.out, exist_ok=True)
            make(step, target, args, folder)
    if not args.plan:
        print("GGUF files in " + os.path.abspath(args.out))


if __name__ == "__main__":
    main()
