"""Pictures for `simulate` (TTFT and TPOT distributions, batch over time) and `frontier` (per chip vs per user).

Matplotlib is imported lazily (Agg backend) so the commands start fast and need no display.
"""

from __future__ import annotations

import numpy as np

from ..core.units import fmt
from .plots_serving import _BLUE, _BOX, _GREEN, _GREY, _ORANGE, _PURPLE, _RED, _plt

__all__ = ["plot_simulation", "plot_frontier_points"]


def _hist(ax, x, color, label, unit="s"):
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    if x.size == 0:
        ax.text(0.5, 0.5, "no values", transform=ax.transAxes, ha="center")
        return
    lo, hi = x.min(), x.max()
    log = hi / lo > 30
    if hi <= lo * (1 + 1e-6):  # every request alike (fixed lengths, a steady wave): one bar
        bins = np.array([lo * 0.98, hi * 1.02])
    else:
        bins = np.geomspace(lo, hi * 1.0001, 50) if log else np.linspace(lo, hi * (1 + 1e-9), 51)
    ax.hist(x, bins=bins, color=color, alpha=0.75)
    if log:
        ax.set_xscale("log")
    top = ax.get_ylim()[1]
    for j, (q, ls) in enumerate(((50, "-"), (90, "--"), (95, "-."), (99, ":"))):
        v = np.percentile(x, q)
        ax.axvline(v, color="black", lw=1.1, ls=ls)
        ax.text(v, top * (0.95 - 0.09 * j), f" p{q} {fmt(v, unit)}", fontsize=9, bbox=_BOX)
    ax.set_xlabel(label)
    ax.set_ylabel("requests")


def plot_simulation(r, path: str) -> str:
    """Three panels: TTFT histogram, TPOT histogram, decode batch over time."""
    plt = _plt()
    st = r.settings
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2), constrained_layout=True)
    load = f"concurrency {st['concurrency']}" if "concurrency" in st else f"{fmt(st.get('rate_per_s', 0))} req/s"
    fig.suptitle(f"{st['model']} on {st['chips']} × {st['chip']} · {st['policy']} · {load} · "
                 f"{st['requests']:,} requests, ISL {fmt(st['isl_mean'])} / OSL {fmt(st['osl_mean'])}\n"
                 f"{fmt(r['output_tokens_per_s'], 'tok/s')} output, {fmt(r['tokens_per_s_per_chip'], 'tok/s')} per chip"
                 f" (simulated)", fontsize=12)
    _hist(axes[0], r.ttft_s, _BLUE, "time to first token (s)")
    axes[0].set_title("TTFT: queueing + prefill")
    _hist(axes[1], r.tpot_s, _ORANGE, "time per output token (s)")
    axes[1].set_title("TPOT: decode steps, stretched by prefills")
    ax = axes[2]
    t, B = r.series_t, r.series_B
    if len(t):
        ax.step(t, B, where="post", color=_GREEN, lw=1.0)
        ax.axhline(r["mean_batch"], color=_GREY, ls="--", lw=1.2)
        ax.text(t[0], r["mean_batch"], f" mean batch {r['mean_batch']:.1f} per decode step", va="bottom",
                color=_GREY, bbox=_BOX)
    if "seats" in st:
        ax.axhline(st["seats"], color=_RED, lw=1.0, ls=":")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("sequences decoding")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Batch over time (KV pool {r['kv_utilisation']:.0%} reserved on average)")
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def plot_frontier_points(fr, path: str) -> str:
    """Every (chips, layout) curve over concurrency, the Pareto frontier, and the answer at a per-user speed."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 6.4), constrained_layout=True)
    groups: dict[tuple, list[dict]] = {}
    for p in fr.points:
        groups.setdefault((p["chips"], p["layout"]), []).append(p)
    colors = [_BLUE, _ORANGE, _GREEN, _PURPLE, _RED, "#8c564b", "#e377c2", "#17becf"]
    for j, ((G, lay), pts) in enumerate(sorted(groups.items())):
        pts = sorted(pts, key=lambda p: p["concurrency"])
        u = [p["tokens_per_s_per_user"] for p in pts]
        c = [p["tokens_per_s_per_chip"] for p in pts]
        col = colors[j % len(colors)]
        ax.plot(u, c, "o-", ms=3, lw=1.2, color=col, alpha=0.8, label=f"{G} chips, {lay}")
        p = pts[-1]
        ax.annotate(f"C={p['concurrency']}", (p["tokens_per_s_per_user"], p["tokens_per_s_per_chip"]),
                    textcoords="offset points", xytext=(4, 4), fontsize=8, color=col)
    front = [fr.points[i] for i in fr.frontier]
    ax.plot([p["tokens_per_s_per_user"] for p in front], [p["tokens_per_s_per_chip"] for p in front], color="black",
            lw=2.4, alpha=0.35, label="Pareto frontier", zorder=0)
    at = fr.at
    if at and at.get("met") and "user_speed" in at["asked"]:
        X = at["asked"]["user_speed"]
        ax.axvline(X, color=_GREY, ls="--", lw=1.2)
        ax.plot([at["tokens_per_s_per_user"]], [at["tokens_per_s_per_chip"]], "*", ms=16, color=_RED, zorder=5)
        ax.annotate(f"best at ≥ {fmt(X)} tok/s/user:\n{fmt(at['tokens_per_s_per_chip'])} tok/s per chip\n"
                    f"{at['chips']} chips {at['layout']}, concurrency {at['concurrency']}",
                    (at["tokens_per_s_per_user"], at["tokens_per_s_per_chip"]), textcoords="offset points",
                    xytext=(12, 10), color=_RED, bbox=_BOX)
    ax.set_xlabel("tokens/s per user (1 / TPOT)")
    ax.set_ylabel("output tokens/s per chip")
    ax.set_yscale("log")
    ax.set_title(f"{fr.model.name} on {fr.system.name} · ISL {fmt(fr.isl)} / OSL {fmt(fr.osl)} · {fr.policy}\n"
                 f"throughput per chip against speed per user, over concurrency C · {fr.method}")
    ax.grid(True, which="both", alpha=0.2)
    ax.legend(loc="lower left")
    fig.savefig(path, dpi=140)
    plt.close(fig)
    return path
