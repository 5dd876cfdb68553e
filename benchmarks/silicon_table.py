"""tokenmath against NVIDIA's measured end-to-end serving runs (aiconfigurator-core's silicon sample): a second table.

    python benchmarks/silicon_table.py [--disagg] [--write rows.csv] [--per-config 2] [--all] [--seed 7]

aiconfigurator-core (pip; the `kernels` extra, Apache-2.0) ships `systems/silicon_sample.csv`: ~5,200
TTFT and TPOT measurements of real deployments at a fixed concurrency — DeepSeek-R1/V3, Qwen3 (32B, 235B),
gpt-oss-120b, Llama 3.1 (8B, 70B), Kimi K2.5, MiniMax-M2.5, GLM-5, Qwen3.5 — on H100, H200, B200, B300,
GB200 and GB300 with TensorRT-LLM, SGLang and vLLM (the data NVIDIA checks its own estimator against).
No tokenmath prior was read off these rows; this script reads them as rows under load (a concurrency,
ISL/OSL, the split, the engine) in the columns of validation/public_measurements.csv and reports how far
`tokenmath validate` lands, by metric and engine: a held-out check of the kind the unseen table is.

Read as follows: one row per distinct measurement (the sample repeats some under two labels; the 2026-03-25
files label splits as their ids do, `tpK_epK` = K chips, while later files write K² — those are read as K);
sizes no 8-GPU node or NVL72 slice is built of (20, 28, 52 …) are left out as untrusted labels; by default at
most `--per-config` rows of each (model, hardware, split, precision, ISL, OSL, metric), drawn with `--seed`.

By default the aggregated runs (`mode == agg`); `--disagg` the disaggregated ones (`mode == disagg`, Dynamo
deployments), written as a published table writes them: each pool's workers and split, `1 prefill worker
(TP1 attention-DP4 EP4) + 4 decode workers (TP8 EP8)`, n_chips = n_p · G_p + n_d · G_d, the concurrency over
the whole deployment. The same label checks hold per pool; a run is left out, with the reason counted, where
its worker counts are not given (the 2026-03-25 and 2026-04-06 files: without them neither the chips nor
the decode workers a concurrency spreads over are known) or a pool's attention ranks (tp · attention-dp) and
expert ranks (moe-tp · ep) disagree.
"""

from __future__ import annotations

import argparse
import collections
import csv
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tokenmath.measure.validate import validate_table
from tokenmath.measure.validate.rows import COLUMNS

HARDWARE = {"h100_sxm": "H100 SXM 80GB", "h200_sxm": "H200 SXM 141GB", "b200_sxm": "B200 180GB", "b300_sxm": "B300",
            "gb200": "GB200 NVL72", "gb300": "GB300 NVL72"}


def _split(r: dict, pre: str = "") -> tuple[int, str] | str:
    """One replica's chips and split text from the columns `{pre}tp_size` …, or why the labels are not trusted."""
    tp, dp, mtp, ep = (int(r[pre + k] or 1) or 1 for k in ("tp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size"))
    if mtp > 1 and ep > 1 and mtp == ep and tp * dp == mtp * ep:  # 'tpK_epK' written as K² chips
        tp, dp, mtp = (tp // ep if dp == 1 else 1), (dp // ep if dp > 1 else 1), 1
    if pre and tp * dp > 1 and mtp * ep > 1 and tp * dp != mtp * ep:
        return f"attention ranks (tp · dp = {tp * dp}) and expert ranks (moe-tp · ep = {mtp * ep}) disagree"
    G = max(tp * dp, mtp * ep)
    if G > (64 if pre and r["system"].startswith("gb") else 16) or G & (G - 1):
        return f"{G} chips a replica: no node or NVL72 slice is built so"
    return G, f"TP{tp}" + (f" attention-DP{dp}" if dp > 1 else "") + (f" EP{ep}" if ep > 1 else "") + \
        (f" MoE-TP{mtp}" if mtp > tp * dp else "")


UNEVEN = "untrusted label: concurrency ≠ batch size × attention-DP ranks"


def _consistent(r: dict, concurrency: int) -> bool:
    """Whether an aggregated run's label agrees with itself: the sample writes `batch_size` per attention-DP rank,
    so concurrency = batch_size · attention_dp_size (a blank or 0 read as 1) — true of 2,780 of the 2,784 runs that
    state attention_dp_size. A run where it fails (a batch of 56 at concurrency 448 with no attention DP named; 13 at
    416) does not say how many sequences each rank held, so the split it ran is not known."""
    dp = int(r["attention_dp_size"] or 1) or 1
    return not r["batch_size"].strip().isdigit() or int(r["batch_size"]) * dp == concurrency


def _pools(r: dict) -> tuple[int, str] | str:
    """A disaggregated run's chips and parallelism text (each pool's workers and split), or why it is left out."""
    n_p, n_d = (int(r[k]) if r[k].strip().isdigit() else 0 for k in ("prefill_num_workers", "decode_num_workers"))
    if not n_p or not n_d:
        return "worker counts not given"
    pools = [_split(r, "prefill_"), _split(r, "decode_")]
    bad = next((x for x in pools if isinstance(x, str)), None)
    if bad:
        return bad
    (G_p, par_p), (G_d, par_d) = pools
    return n_p * G_p + n_d * G_d, (f"{n_p} prefill worker{'s' * (n_p > 1)} ({par_p}) + "
                                   f"{n_d} decode worker{'s' * (n_d > 1)} ({par_d})")


def silicon_rows(per_config: int | None = 2, seed: int = 7, mode: str = "agg",
                 skipped: collections.Counter | None = None) -> list[dict]:
    """The silicon sample's runs of one mode ('agg' or 'disagg') as validation rows (TPOT and TTFT, ms); the
    runs left out are counted in `skipped` by reason."""
    try:
        import aiconfigurator_core
    except ImportError:
        sys.exit("aiconfigurator-core is not installed: pip install -e '.[kernels]'")
    src = Path(aiconfigurator_core.__file__).parent / "systems" / "silicon_sample.csv"
    raw = list(csv.DictReader(src.open(encoding="utf-8")))
    raw.sort(key=lambda r: (not r["id"].startswith("2026_03_25"), r["id"]))  # the consistently labelled file first
    skipped = skipped if skipped is not None else collections.Counter()
    out, seen = [], set()
    for r in raw:
        m = re.search(r"silicon_concurrency=(\d+)", r["silicon_data_source"])
        if r["mode"] != mode:
            continue
        if r["system"] not in HARDWARE or not m:
            skipped["hardware not in the catalog" if r["system"] not in HARDWARE else "no concurrency stated"] += 1
            continue
        key = (r["model_path"], r["system"], r["backend"], r["isl"], r["osl"], m.group(1), r["silicon_ttft_ms"],
               r["silicon_tpot_ms"])
        if key in seen:
            skipped["the same measurement under another label"] += 1
            continue
        read = _pools(r) if mode == "disagg" else (_split(r) if _consistent(r, int(m.group(1))) else UNEVEN)
        if isinstance(read, str):
            skipped[read if mode == "disagg" or read == UNEVEN else "untrusted split label"] += 1
            continue
        seen.add(key)  # a run left out does not hide the same measurement under a label that reads
        G, par = read
        prec = (r["precision"] or r["gemm_quant_mode"] or "bf16").upper()
        for metric, col in (("tpot_ms", "silicon_tpot_ms"), ("ttft_ms", "silicon_ttft_ms")):
            out.append({"id": f"SIL-{len(out) + 1:05d}",
                        "source": f"aiconfigurator-core systems/silicon_sample.csv {r['id']}; {r['backend']} "
                                  f"{r['backend_version']}",
                        "model": r["model_path"].split("/")[-1], "precision": prec, "hardware": HARDWARE[r["system"]],
                        "n_chips": str(G), "parallelism": f"{par} ({r['backend']})", "batch": f"concurrency {m.group(1)}",
                        "input_len": r["isl"], "output_len": r["osl"], "context_len": "", "metric": metric,
                        "value": r[col], "unit": "ms", "confidence": "verbatim",
                        "notes": f"gemm {r['gemm_quant_mode']}, moe {r['moe_quant_mode']}"})
    if per_config:
        groups = collections.defaultdict(list)
        for row in out:
            groups[tuple(row[c] for c in ("model", "hardware", "parallelism", "precision", "input_len", "output_len",
                                           "metric"))].append(row)
        rng = random.Random(seed)
        out = sorted((x for g in groups.values() for x in rng.sample(g, min(per_config, len(g)))),
                     key=lambda x: x["id"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", default=None, help="also write the rows as a CSV (the validation table's columns)")
    ap.add_argument("--per-config", type=int, default=2, help="rows per configuration and metric (default 2)")
    ap.add_argument("--all", action="store_true", help="every row (slow: minutes)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--disagg", action="store_true", help="the disaggregated runs (prefill and decode pools) instead")
    args = ap.parse_args()
    skipped: collections.Counter = collections.Counter()
    rows = silicon_rows(None if args.all else args.per_config, args.seed, "disagg" if args.disagg else "agg", skipped)
    path = Path(args.write) if args.write else Path(tempfile.mkdtemp()) / "silicon.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    t0 = time.perf_counter()
    rep = validate_table(path)
    dt = time.perf_counter() - t0
    by_id = {r["id"]: r for r in rows}
    groups: dict[tuple, list[float]] = collections.defaultdict(list)
    for p in rep.rows:
        r = by_id[p.id]
        engine = r["parallelism"].rsplit("(", 1)[-1].rstrip(")")
        for key in ((r["metric"], "all"), (r["metric"], engine)):
            groups[key].append(p.error)
    print(f"aiconfigurator-core silicon sample ({'disaggregated' if args.disagg else 'aggregated'} runs): "
          f"{len(rows)} rows, {len(rep.rows)} predicted, {len(rep.unexpressed)} "
          f"not expressible, {len(rep.violations())} measurements beat their spec bound, {dt:.1f} s")
    print(f"{'metric':8s} {'engine':8s} {'rows':>5s} {'median|e|':>10s} {'p90|e|':>8s} {'median e':>9s}")
    for (metric, engine), e in sorted(groups.items()):
        a = np.abs(e)
        print(f"{metric:8s} {engine:8s} {len(e):5d} {np.median(a):10.1%} {np.percentile(a, 90):8.1%} "
              f"{np.median(e):+9.1%}")
    inside = [p.interval[0] <= p.measured <= p.interval[1] for p in rep.rows if p.interval]
    if inside:
        print(f"80 % intervals (catalog/intervals/serving.yaml, in sample: these rows' residuals are pooled there) "
              f"cover {np.mean(inside):.1%} of {len(inside)} rows")
    for reason, n in skipped.most_common():
        print(f"  runs left out ({n}): {reason}")
    reasons = collections.Counter(u.reason.split(":")[0][:70] for u in rep.unexpressed)
    for reason, n in reasons.most_common(6):
        print(f"  not expressible ({n}): {reason}")


if __name__ == "__main__":
    main()
