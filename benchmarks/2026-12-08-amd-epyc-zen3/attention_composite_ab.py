"""One GPT layer's attention at nanoGPT's CPU shape (B 12, H 4, T 64, head 32), forward and backward:
Ember's flash kernel (scaled_dot_product_attention) against the composite matmul, masked softmax,
matmul, in turns. Run with the peer venv's python: OMP_NUM_THREADS=T python attention_composite_ab.py"""
import time, math, ember, numpy as np
import ember.nn.functional as F
B,H,T,D = 12,4,64,32
rng = np.random.default_rng(0)
def t(): return ember.from_numpy(rng.standard_normal((B,H,T,D)).astype(np.float32)).requires_grad_()
q,k,v = t(),t(),t()
g = ember.from_numpy(rng.standard_normal((B,H,T,D)).astype(np.float32))
mask = ember.from_numpy(np.triu(np.full((T,T), -np.inf, dtype=np.float32), 1))
def flash():
    o = F.scaled_dot_product_attention(q,k,v,is_causal=True); (o*g).sum().backward()
def comp():
    s = (q @ k.transpose(-1,-2)) * (1/math.sqrt(D)) + mask
    o = s.softmax(-1) @ v; (o*g).sum().backward()
for f in (flash, comp):
    for _ in range(5): f()
res = {flash: [], comp: []}
for r in range(30):
    for f in ((flash, comp) if r%2 else (comp, flash)):
        t0=time.perf_counter(); f(); res[f].append(time.perf_counter()-t0)
for f in (flash, comp): print(f.__name__, "%.3f ms" % (1e3*np.median(res[f])))
