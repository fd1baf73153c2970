#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Time per CP-ALS iteration on N nodes x G GPUs: a model (issue 49 item 6).

docs/SCALING.md gives the equations, where every parameter comes from, the
validation table and the 4 x 8 H100 prediction; this file computes them.
Python 3 standard library only.

One CP-ALS iteration of tenfold over P = N * G GPUs (src/gpu/cpd/multi.cu):
per mode n, each GPU runs the MTTKRP of its shard (nnz / P non-zeros), solves
its rows, then its rows of the new factor go to every other GPU (the
exchange: an all-gather of I_n x R x value-bytes per mode); normalisation and
the Gram matrix run on the whole factor on every GPU alike; the fit needs the
last mode's rows, so the last mode's exchange is always exposed. With
`tuning.cpd_overlap` (R <= 32) the exchange of mode n runs beside the part of
mode n+1's MTTKRP whose mode-n rows are the GPU's own: about 1/P of its shard.

    M      = order * nnz * R / (P * thr) * (1 + imbalance)      MTTKRP, all modes
    D      = c_dense * sum_n I_n * R^2                          dense steps (not / P)
    S_n    = I_n * R * value_bytes                              mode n's factor
    X_n    = exchange time of S_n (below)
    W_n    = M / order / P                                      overlap window of X_n
    T_none = M + D + sync + sum_n X_n                           nothing overlapped
    T_ovl  = M + D + sync + X_last + sum_{n<last} max(0, X_n - W_{n+1})

Exchange of S bytes over N nodes x G GPUs (per-GPU link rates: B_nv within a
node, B_net between nodes):
    one node (N = 1):   X = (P-1)/P * S / B_nv
    hierarchical (low): X = max((N-1)/N * S / (G * B_net), (G-1)/G * S / B_nv)
                        (rails between nodes, then NVLink; pipelined)
    ring (NCCL):        X = (P-1)/P * S / min(B_nv, G * B_net)
    flat (high):        X = (N-1)/N * S / B_net + (G-1)/P * S / B_nv
                        (every GPU pulls the other nodes' rows over its own NIC)

Usage:
    bench/scaling_model.py                 validation tables + the 4 x 8 H100 prediction
    bench/scaling_model.py --json          the same numbers as JSON (tests/cli/scaling_model.sh)
    bench/scaling_model.py --predict --gpu h100 --nodes 4 --gpus-per-node 8 --nnz 10e9 \\
        --dims 200e6,100e6,20e6 [--fp32] [--rank 32] [--net-gbs 50] [--nv-gbs 300]
    bench/scaling_model.py --socket-run T_EXCHANGE_PER_ITER [--nnz 1e9 ...]
        the socket-transport run's link rate from its measured exchange
"""
import argparse
import json
import sys

GB = 1e9

# The 1B skewed tensor of every multi-GPU benchmark:
# `--gen dims=20000000x10000000x2000000,nnz=1000000000,alpha=0.7,seed=7`.
T1B = {"nnz": 1e9, "dims": (20e6, 10e6, 2e6)}

# One-GPU points that calibrate the model (bench/RESULTS.md): seconds per
# iteration and its dense + fit part, R 32.  thr and c_dense come from these.
CALIBRATION = {
    ("h200", 8): {"t": 0.330, "dense": 0.005,
                  "src": "RESULTS.md 'Multi-GPU CP-ALS (issue #28)' 2026-11-26 (2 x H200); issue 49's 0.330"},
    ("h200", 4): {"t": 0.175, "dense": 0.004,
                  "src": "RESULTS.md 'Multi-GPU CP-ALS (issue #28)' 2026-11-26 (2 x H200)"},
    ("h100", 8): {"t": 0.492, "dense": 0.006,
                  "src": "RESULTS.md 'Twenty-fifth session' 2026-11-26 (4 x H100)"},
    ("h100", 4): {"t": 0.246, "dense": 0.004,
                  "src": "RESULTS.md 'Twenty-fifth session' 2026-11-26 (4 x H100)"},
}

# Link rates, GB/s per GPU and direction.
NV_PEER_GBS = 300.0  # measured: 4 x H100 one process, peer copies in a rotation: 6.14 GB per
#                      GPU per fp64 iteration in 19.6 ms (RESULTS.md 'Twenty-fifth session');
#                      2 GPUs 4.1 GB in 13.4 ms (306); fp32 293 / 307. NVLink 4 nominal: 450.
NV_NCCL_GBS = 200.0  # measured: 2 x H200, NCCL grouped broadcasts, 4.1 GB in ~21 ms
#                      (RESULTS.md 'Multi-GPU CP-ALS (issue #28)', 2026-11-26): MPI ranks' path
NET_GBS = 50.0       # ASSUMED: InfiniBand NDR 400 Gb/s per GPU, nominal (no multi-node run yet)
SYNC_S = 0.002       # measured: the fit's reduction and waits on >1 GPU ('fit' 0.001-0.002 s
#                      against 0.000 on one GPU, RESULTS.md 'Twenty-fifth session')

# Measured points the model is checked against: (gpu, value bytes, GPUs,
# transport, s / iteration, source).  All on T1B, R 32, overlap on.
MEASURED = [
    ("h200", 8, 1, "peer", 0.330, "issue 49 item 5 / RESULTS.md issue #28 2026-11-26"),
    ("h200", 8, 2, "peer", 0.177, "issue 49 item 5 (4 x H200); 0.169-0.1765 in RESULTS.md 23rd session"),
    ("h200", 8, 4, "peer", 0.097, "issue 49 item 5 (4 x H200, rotation); 0.103 before it (23rd session)"),
    ("h200", 8, 2, "nccl", 0.182, "RESULTS.md issue #28 2026-11-26, 2 GPUs NCCL, overlapped (0.175-0.189)"),
    ("h200", 4, 2, "nccl", 0.090, "RESULTS.md issue #28 2026-11-26, fp32 2 GPUs NCCL, overlapped"),
    ("h100", 8, 1, "peer", 0.492, "RESULTS.md 25th session 2026-11-26"),
    ("h100", 8, 2, "peer", 0.253, "RESULTS.md 25th session"),
    ("h100", 8, 4, "peer", 0.132, "RESULTS.md 25th session"),
    ("h100", 8, 2, "nccl", 0.257, "RESULTS.md 25th session, 2 MPI ranks"),
    ("h100", 8, 4, "nccl", 0.136, "RESULTS.md 25th session, 4 MPI ranks"),
    ("h100", 4, 1, "peer", 0.246, "RESULTS.md 25th session, fp32"),
    ("h100", 4, 2, "peer", 0.128, "RESULTS.md 25th session, fp32"),
    ("h100", 4, 4, "peer", 0.068, "RESULTS.md 25th session, fp32"),
    ("h100", 4, 4, "nccl", 0.071, "RESULTS.md 25th session, fp32, 4 MPI ranks"),
]

# GPU memory per GPU, fitted to the 1B fp64 runs on 1 / 2 / 4 GPUs (57.7 /
# 65.4 / 80.7 GiB in all, RESULTS.md 23rd-25th sessions): 53.7 B per non-zero
# of the GPU's shard (fp32: 39 B) plus every factor in full (1.0 x sum S_n).
SHARD_BYTES = {8: 53.7, 4: 39.2}
H100_MEMORY = 79.2 * 2**30
H200_MEMORY = 139.8 * 2**30


def calibrate(gpu, vb, rank, nnz, dims):
    """thr (non-zero-modes x R per second) and c_dense (s per row x R^2) from the one-GPU point."""
    c = CALIBRATION[(gpu, vb)]
    order = len(T1B["dims"])
    mttkrp = c["t"] - c["dense"]
    thr = order * T1B["nnz"] * 32 / mttkrp
    c_dense = c["dense"] / (sum(T1B["dims"]) * 32 * 32)
    return thr, c_dense


def exchange(s, nodes, g, nv, net, how):
    p = nodes * g
    if p == 1:
        return 0.0
    if nodes == 1:
        return (p - 1) / p * s / nv
    if how == "hierarchical":
        return max((nodes - 1) / nodes * s / (g * net), (g - 1) / g * s / nv)
    if how == "ring":
        return (p - 1) / p * s / min(nv, g * net)
    if how == "flat":
        return (nodes - 1) / nodes * s / net + (g - 1) / p * s / nv
    raise ValueError(how)


def model(nnz, dims, rank, vb, nodes, g, thr, c_dense, nv, net, how="ring", imbalance=0.0, sync=SYNC_S):
    """The parts of one iteration (seconds) and both overlap bounds."""
    p = nodes * g
    order = len(dims)
    m = order * nnz * rank / (p * thr) * (1.0 + imbalance)
    d = c_dense * sum(dims) * rank * rank
    sy = sync if p > 1 else 0.0
    x = [exchange(i * rank * vb, nodes, g, nv * GB, net * GB, how) for i in dims]
    window = m / order / p
    exposed = x[-1] + sum(max(0.0, xn - window) for xn in x[:-1])
    memory = SHARD_BYTES[vb] * nnz / p + sum(dims) * rank * vb
    return {"gpus": p, "mttkrp": m, "dense": d, "sync": sy, "exchange": sum(x),
            "exchange_exposed": exposed, "t_overlap": m + d + sy + exposed,
            "t_none": m + d + sy + sum(x), "memory_per_gpu": memory,
            "factor_bytes": sum(dims) * rank * vb}


def validation():
    rows = []
    for gpu, vb, p, transport, t, src in MEASURED:
        thr, cd = calibrate(gpu, vb, 32, T1B["nnz"], T1B["dims"])
        nv = NV_PEER_GBS if transport == "peer" else NV_NCCL_GBS
        r = model(T1B["nnz"], T1B["dims"], 32, vb, 1, p, thr, cd, nv, NET_GBS)
        rows.append({"gpu": gpu, "precision": "fp64" if vb == 8 else "fp32", "gpus": p,
                     "transport": transport, "measured": t, "model": r["t_overlap"],
                     "model_no_overlap": r["t_none"], "rel_error": r["t_overlap"] / t - 1.0,
                     "mttkrp": r["mttkrp"], "exchange": r["exchange"],
                     "exchange_exposed": r["exchange_exposed"], "source": src})
    return rows


def predict(gpu, vb, rank, nnz, dims, nodes, g, nv, net, imbalance=0.0):
    thr, cd = calibrate(gpu, vb, rank, nnz, dims)
    out = {}
    for how in ("hierarchical", "ring", "flat"):
        out[how] = model(nnz, dims, rank, vb, nodes, g, thr, cd, nv, net, how, imbalance)
    return {"gpu": gpu, "precision": "fp64" if vb == 8 else "fp32", "rank": rank, "nnz": nnz,
            "dims": list(dims), "nodes": nodes, "gpus_per_node": g, "nv_gbs": nv, "net_gbs": net,
            "low": out["hierarchical"]["t_overlap"], "expected": out["ring"]["t_overlap"],
            "high": out["flat"]["t_none"], "parts": out,
            "memory_limit": H100_MEMORY if gpu == "h100" else H200_MEMORY}


def prediction_set():
    """The 10B-non-zero tensor on 4 x 8 H100 (fp64 and fp32, two ways to grow the dims)."""
    res = []
    for label, scale in (("dims x10", 10.0), ("dims x sqrt(10)", 10 ** 0.5)):
        dims = tuple(d * scale for d in T1B["dims"])
        for vb in (8, 4):
            r = predict("h100", vb, 32, 10e9, dims, 4, 8, NV_NCCL_GBS, NET_GBS)
            r["label"] = label
            res.append(r)
    return res


def node_sweep(vb=8):
    """10B (dims x sqrt(10)) on 1, 2, 4, 8 nodes x 8 H100: where the time goes past one node."""
    dims = tuple(d * 10 ** 0.5 for d in T1B["dims"])
    rows = []
    for nodes in (1, 2, 4, 8):
        r = predict("h100", vb, 32, 10e9, dims, nodes, 8, NV_NCCL_GBS, NET_GBS)
        rows.append(r)
    return rows


def socket_rate(t_exchange, nnz, dims, rank, vb):
    """Link rate (GB/s) implied by a 2-rank run's measured exchange time per iteration."""
    s = sum(dims) * rank * vb
    return 0.5 * s / t_exchange / GB


def fmt_ms(s):
    return "%.1f" % (1e3 * s)


def print_tables(val, pred):
    print("Validation: 1B skewed tensor (20M x 10M x 2M, alpha 0.7), R 32, one node, overlap on")
    print("| GPU | precision | GPUs | transport | measured s | model s | rel. error | no-overlap bound s | MTTKRP ms | exchange ms (exposed) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in val:
        print("| %s | %s | %d | %s | %.3f | %.3f | %+.1f %% | %.3f | %s | %s (%s) |" % (
            r["gpu"].upper(), r["precision"], r["gpus"], r["transport"], r["measured"], r["model"],
            100 * r["rel_error"], r["model_no_overlap"], fmt_ms(r["mttkrp"]), fmt_ms(r["exchange"]),
            fmt_ms(r["exchange_exposed"])))
    print()
    print("Prediction: 10B non-zeros, R 32, 4 nodes x 8 H100 (NVLink %g GB/s NCCL, network %g GB/s per GPU)"
          % (NV_NCCL_GBS, NET_GBS))
    print("| dims | precision | MTTKRP ms | dense ms | exchange ms: hier. / ring / flat | "
          "s / it. low (hier., overlap) | expected (ring, overlap) | high (flat, none) | GPU memory GB (limit %.0f) |"
          % (H100_MEMORY / GB))
    print("|---|---|---|---|---|---|---|---|---|")
    for r in pred:
        pr = r["parts"]
        mem = pr["ring"]["memory_per_gpu"]
        print("| %s (%s) | %s | %s | %s | %s / %s / %s | %.3f | %.3f | %.3f | %.1f%s |" % (
            r["label"], "x".join("%.0fM" % (d / 1e6) for d in r["dims"]), r["precision"],
            fmt_ms(pr["ring"]["mttkrp"]), fmt_ms(pr["ring"]["dense"]),
            fmt_ms(pr["hierarchical"]["exchange"]), fmt_ms(pr["ring"]["exchange"]), fmt_ms(pr["flat"]["exchange"]),
            r["low"], r["expected"], r["high"], mem / GB,
            "" if mem <= r["memory_limit"] else " (does not fit)"))


def print_sweep(rows):
    print()
    print("Past one node: 10B non-zeros, dims x sqrt(10), fp64, R 32, N nodes x 8 H100 (ring exchange, overlap on)")
    print("| nodes | GPUs | MTTKRP ms | dense ms | exchange ms (exposed) | s / it. (low .. high) | "
          "exchange / MTTKRP | speed-up over 1 node | GPU memory GB |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = rows[0]["expected"]
    for r in rows:
        p = r["parts"]["ring"]
        print("| %d | %d | %s | %s | %s (%s) | %.3f (%.3f .. %.3f) | %.2f | %.2fx | %.1f%s |" % (
            r["nodes"], p["gpus"], fmt_ms(p["mttkrp"]), fmt_ms(p["dense"]), fmt_ms(p["exchange"]),
            fmt_ms(p["exchange_exposed"]), r["expected"], r["low"], r["high"], p["exchange"] / p["mttkrp"],
            base / r["expected"], p["memory_per_gpu"] / GB,
            "" if p["memory_per_gpu"] <= r["memory_limit"] else " (does not fit)"))


def parse_dims(text):
    try:
        dims = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a list of numbers I1,I2,..." % text)
    if len(dims) < 2 or min(dims) < 1:
        raise argparse.ArgumentTypeError("'%s': at least 2 modes of at least 1 row" % text)
    return dims


class OneLineParser(argparse.ArgumentParser):
    """Bad input: one line on stderr naming the option, exit 2."""

    def error(self, message):
        sys.stderr.write("scaling_model.py: %s\n" % message)
        sys.exit(2)


def main(argv):
    ap = OneLineParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    ap.add_argument("--predict", action="store_true", help="one prediction from the options below")
    ap.add_argument("--socket-run", type=float, metavar="SECONDS",
                    help="a 2-rank run's measured exchange per iteration: print the link rate it implies")
    ap.add_argument("--gpu", choices=("h100", "h200"), default="h100")
    ap.add_argument("--fp32", action="store_true")
    ap.add_argument("--rank", type=int, default=32)
    ap.add_argument("--nnz", type=float, default=10e9)
    ap.add_argument("--dims", type=parse_dims, default=None, help="I1,I2,... (default: the 1B tensor's x nnz/1e9)")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--nv-gbs", type=float, default=NV_NCCL_GBS)
    ap.add_argument("--net-gbs", type=float, default=NET_GBS)
    ap.add_argument("--imbalance", type=float, default=0.0)
    a = ap.parse_args(argv)
    if a.rank < 1 or a.nnz <= 0 or a.nodes < 1 or a.gpus_per_node < 1 or a.nv_gbs <= 0 or a.net_gbs <= 0:
        ap.error("--rank, --nnz, --nodes, --gpus-per-node, --nv-gbs and --net-gbs must be positive")
    vb = 4 if a.fp32 else 8
    dims = a.dims or tuple(d * a.nnz / T1B["nnz"] for d in T1B["dims"])
    if a.socket_run is not None:
        if a.socket_run <= 0:
            ap.error("--socket-run: the exchange time must be positive")
        rate = socket_rate(a.socket_run, a.nnz if a.dims else T1B["nnz"], a.dims or T1B["dims"], a.rank, vb)
        print(json.dumps({"link_gbs": rate}) if a.json else "socket transport: %.2f GB/s per rank" % rate)
        return 0
    if a.predict:
        r = predict(a.gpu, vb, a.rank, a.nnz, dims, a.nodes, a.gpus_per_node, a.nv_gbs, a.net_gbs, a.imbalance)
        if a.json:
            print(json.dumps(r, indent=1))
        else:
            for how, p in r["parts"].items():
                print("%-12s MTTKRP %s ms, dense %s ms, exchange %s ms (exposed with overlap %s ms): "
                      "%.3f s overlapped, %.3f s not; GPU memory %.1f GB" % (
                          how, fmt_ms(p["mttkrp"]), fmt_ms(p["dense"]), fmt_ms(p["exchange"]),
                          fmt_ms(p["exchange_exposed"]), p["t_overlap"], p["t_none"], p["memory_per_gpu"] / GB))
        return 0
    val, pred, sweep = validation(), prediction_set(), node_sweep()
    if a.json:
        print(json.dumps({"validation": val, "prediction": pred, "sweep": sweep}, indent=1))
    else:
        print_tables(val, pred)
        print_sweep(sweep)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
