# SPDX-License-Identifier: BSD-3-Clause
"""SDDMM from Python with host (numpy) and GPU (PyTorch CUDA) operands, issue 29:
shows that GPU arrays go through DLPack with no host round trip.

    python bench/python/dlpack_sddmm.py [--nnz 20000000] [--rows 1000000] [--K 32] [--reps 10]

On a random rows x rows pattern of --nnz non-zeros (CSR order), K columns:
  plan numpy   SDDMMPlan.run(A, B) with numpy A, B: uploads A and B, downloads P each call
  plan torch   SDDMMPlan.run(A, B) with CUDA tensors: reads them in place, P stays on the GPU
  plan torch via host   the same through the host: A.cpu().numpy() ... torch.from_numpy(P).cuda()
  sddmm numpy [gpu] / sddmm torch   the one-shot tenfold.sddmm (plans quickly, uploads S, runs, frees;
                numpy operands with device='gpu', then 'auto')
  cusparse torch, S up   torch.sparse.sampled_addmm (cuSPARSE's SDDMM) on CUDA A and B with S's
                CSR arrays uploaded from the host in the call: the one-shot tenfold.sddmm's task
  cusparse torch         the same with S already on the GPU (cuSPARSE's set-up and run alone)
Each the median of --reps calls after one warm-up, wall clock around a call that returns
once P is written (torch.cuda.synchronize() before and after). Needs tenfold with CUDA, torch.
"""
import argparse
import statistics
import time

import numpy as np
import torch

import tenfold


def timed(name, fn, reps):
    t0 = time.perf_counter()
    fn()
    print(f"  {name}: first call {1e3 * (time.perf_counter() - t0):.1f} ms", flush=True)
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return name, statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nnz", type=int, default=20_000_000)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--K", type=int, default=32)
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    flat = np.unique(rng.integers(0, a.rows * a.rows, size=a.nnz, dtype=np.int64))  # sorted: CSR order
    coords = np.stack(np.divmod(flat, a.rows), axis=1)
    S = (coords, np.ones(len(flat)), (a.rows, a.rows))
    A, B = rng.standard_normal((a.rows, a.K)), rng.standard_normal((a.rows, a.K))
    At, Bt = torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda()
    print(f"tenfold {tenfold.__version__} ({tenfold.build_info()['cuda_toolkit'] or 'no CUDA'}), torch "
          f"{torch.__version__}, {torch.cuda.get_device_name(0)}")
    print(f"S {a.rows} x {a.rows}, {len(flat)} non-zeros, K = {a.K}, fp64; median of {a.reps} calls")
    rows = []
    with tenfold.SDDMMPlan(S, a.K, device="gpu") as plan:
        print(f"plan: {plan!r} {plan.note}", flush=True)
        Pn = plan.run(A, B)
        print("  first run with numpy operands: done", flush=True)
        Pt = plan.run(At, Bt)
        print("  first run with torch operands: done", flush=True)
        err = float(np.abs(Pt.cpu().numpy() - Pn).max() / np.abs(Pn).max())
        rows.append(timed("plan numpy", lambda: plan.run(A, B), a.reps))
        rows.append(timed("plan torch", lambda: plan.run(At, Bt), a.reps))
        rows.append(timed("plan torch via host",
                          lambda: torch.from_numpy(plan.run(At.cpu().numpy(), Bt.cpu().numpy())).cuda(), a.reps))
    reps1 = max(2, a.reps // 4)
    rows.append(timed("sddmm numpy gpu", lambda: tenfold.sddmm(S, A, B, device="gpu"), reps1))
    rows.append(timed("sddmm numpy", lambda: tenfold.sddmm(S, A, B), reps1))
    rows.append(timed("sddmm torch", lambda: tenfold.sddmm(S, At, Bt), reps1))
    try:  # the same S as a scipy CSR matrix: the form cuSPARSE is given below (no COO to sort or check)
        import scipy.sparse as sp
        Scsr = sp.csr_matrix((S[1], (coords[:, 0], coords[:, 1])), shape=S[2])
        rows.append(timed("sddmm torch, S csr", lambda: tenfold.sddmm(Scsr, At, Bt), reps1))
    except ImportError:
        print("  (no scipy: the one-shot with a CSR S is not timed)")
    # cuSPARSE's one-shot SDDMM through PyTorch, on the same S (CSR) and the same CUDA A and B
    crow = np.zeros(a.rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(coords[:, 0], minlength=a.rows), out=crow[1:])
    col, val = coords[:, 1].astype(np.int64), np.ones(len(flat))

    def sp_up():
        St = torch.sparse_csr_tensor(torch.from_numpy(crow).cuda(), torch.from_numpy(col).cuda(),
                                     torch.from_numpy(val).cuda(), size=(a.rows, a.rows))
        return torch.sparse.sampled_addmm(St, At, Bt.t(), beta=0.0)

    St_dev = torch.sparse_csr_tensor(torch.from_numpy(crow).cuda(), torch.from_numpy(col).cuda(),
                                     torch.from_numpy(val).cuda(), size=(a.rows, a.rows))
    Pc = sp_up().values().cpu().numpy()
    rows.append(timed("cusparse torch, S up", sp_up, reps1))
    rows.append(timed("cusparse torch", lambda: torch.sparse.sampled_addmm(St_dev, At, Bt.t(), beta=0.0), reps1))
    err_c = float(np.abs(Pc - Pn).max() / np.abs(Pn).max())
    one = dict(rows)
    if "sddmm torch, S csr" in one:
        print(f"one-shot tenfold.sddmm torch, S a scipy CSR / cuSPARSE with S uploaded: "
              f"{one['sddmm torch, S csr'] / one['cusparse torch, S up']:.2f}x (goal <= 1.2x)")
    print(f"one-shot tenfold.sddmm torch / cuSPARSE with S uploaded: "
          f"{one['sddmm torch'] / one['cusparse torch, S up']:.2f}x (goal <= 1.2x); torch / numpy one-shot: "
          f"{one['sddmm torch'] / one['sddmm numpy']:.2f}x (goal <= 1); max |P(cusparse) - P| / max |P| = {err_c:.2e}")
    moved = (A.nbytes + B.nbytes + 8 * len(flat)) / 1e9
    print(f"{'call':22s} {'ms':>9s}")
    for name, t in rows:
        print(f"{name:22s} {1e3 * t:9.2f}")
    print(f"max |P(torch) - P(numpy)| / max |P| = {err:.2e}; a host round trip moves {moved:.2f} GB per call "
          f"(A, B up, P down)")
    print(f"RESULT dlpack_sddmm nnz={len(flat)} K={a.K} " + " ".join(
        f"{name.replace(' ', '_')}_ms={1e3 * t:.2f}" for name, t in rows))


if __name__ == "__main__":
    main()
