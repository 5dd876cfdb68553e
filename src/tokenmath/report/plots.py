"""The lecture report's pictures, each drawn from catalog records through the analysis modules.

Matplotlib is imported lazily with the Agg backend. Pictures the serving commands already draw
(`cli.plots_serving`: the sweep and the latency–cost frontier) are reused, not redrawn. Each function
takes the `LectureContext` and a folder and returns (file name, caption); a picture whose inputs are
missing raises `NotComputable` and is listed in the report as absent, with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from ..core import arch
from ..lecture.claim import NotComputable
from ..lecture.common import bstar, drain_time, ref
from ..core.roofline import hardware_ratio, step
from ..serving.serve import usd_per_mtok
from ..core.units import COMPUTE_FORMAT, fmt

__all__ = ["PLOTS", "draw_all"]

_BLUE, _ORANGE, _GREEN, _RED, _PURPLE, _GREY = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#7f7f7f"


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 10.5, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 9,
                         "axes.spines.top": False, "axes.spines.right": False})
    return plt


def batch_curves(ctx, out: Path) -> tuple[str, str]:
    """Latency and cost per token vs batch for the reference case, B* marked, spec and prior bases."""
    plt = _plt()
    r = ref(ctx)
    Bs = float(bstar(r.model, r.system, r.precision).value)
    B = np.unique(np.round(np.geomspace(1, 32 * Bs, 300)))
    S = 4096.0
    price = r.system.usd_per_chip_hour
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13.5, 5.2), constrained_layout=True)
    for basis, color, S_ in (("spec", _BLUE, 0.0), ("spec", _PURPLE, S), ("prior", _ORANGE, S)):
        st = step(r.model, r.system, G=r.G, B=B, S=S_, precision=r.precision, basis=basis)
        t = np.asarray(st.t_step, dtype=float)
        label = f"{basis}, context {fmt(S_)} tok"
        ax1.plot(B, t * 1e3, color=color, lw=2, label=label)
        cost = usd_per_mtok(r.G, price, t, B) if price else r.G * t / B * 1e6 / 3600
        ax2.plot(B, cost, color=color, lw=2, label=label)
    for ax in (ax1, ax2):
        ax.axvline(Bs, color=_RED, lw=1.4, ls="--")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, which="major", alpha=0.25)
        ax.set_xlabel("batch B (sequences decoded per step)")
    ax1.text(Bs * 1.1, ax1.get_ylim()[0] * 1.5, f"B* = R·ρ = {fmt(Bs)}", color=_RED)
    ax2.text(Bs * 1.1, ax2.get_ylim()[1] / 2, f"B* = R·ρ = {fmt(Bs)}", color=_RED, va="top")
    ax1.set_ylabel("latency per decode step (ms)")
    ax1.set_title("Latency vs batch: flat (weights) until B*, then linear (compute/KV)")
    ax2.set_ylabel("USD per million output tokens" if price else "chip-hours per million output tokens")
    ax2.set_title("Cost per token vs batch: a hyperbola onto a floor")
    ax1.legend(loc="upper left")
    fig.suptitle(f"{r.model.display_name or r.model.name} on {r.G} × {r.system.chip.display_name or r.system.chip.name}"
                 f", {r.precision} weights", fontsize=12.5)
    name = "batch_curves.png"
    fig.savefig(out / name, dpi=130)
    plt.close(fig)
    return name, (f"Latency and cost vs batch for {r.model.name} on {r.G} × {r.system.chip.name} ({r.precision}); "
                  f"B* = {fmt(Bs)} marked. Spec = peaks only (the lecture's model), prior = with efficiency priors "
                  "and per-step overhead.")


def sweep_picture(ctx, out: Path) -> tuple[str, str]:
    """Cost vs batch and cost vs context with the KV wall, from `tokenmath sweep`'s own plot."""
    try:
        from ..cli.plots_serving import plot_sweep
        from ..serving.sweep import default_contexts, sweep
    except ImportError:
        raise NotComputable("tokenmath.serving.sweep / cli.plots_serving not in this build") from None
    r = ref(ctx)
    sw = sweep(r.model, r.system, G=r.G, context=default_contexts(), S_ref=4096, precision=r.precision, basis="spec")
    name = "sweep_cost_vs_batch_and_context.png"
    plot_sweep(sw, str(out / name))
    return name, (f"`tokenmath sweep {r.model.name} --on {r.system.name} --chips {r.G}` (spec basis): cost vs batch "
                  "with B*, B_bal and the memory limit; cost vs context with the KV wall L*.")


def frontier_picture(ctx, out: Path) -> tuple[str, str]:
    """The latency–cost frontier with fast mode on it, from `tokenmath fastmode`'s own plot."""
    try:
        from ..serving import modes
        from ..cli.plots_serving import plot_frontier
    except ImportError:
        raise NotComputable("tokenmath.serving.modes (fast and slow modes, issue 3) not in this build") from None
    r = ref(ctx)
    p, s = ctx.said_input("FM1", "price_multiple"), ctx.said_input("FM1", "speed_multiple")
    S = ctx.lecture["reference"]["context"]
    fr = modes.fast_slow_modes(p, s, model=r.model, system=r.system, G=r.G, S=S, precision=r.precision, basis="spec")
    name = "latency_cost_frontier.png"
    plot_frontier(fr, str(out / name))
    return name, (f"`tokenmath fastmode --price-multiple {fmt(p)} --speed-multiple {fmt(s)}` on {r.model.name}, "
                  f"{r.G} × {r.system.chip.name}, context {fmt(S)} tok: every batch's latency and cost, the Pareto "
                  "frontier, and the standard and fast operating points the multiples imply.")


_LABEL_OFFSETS = ((4, 3), (4, -11), (-4, 3), (-4, -11), (4, 12), (4, -20), (-4, 12), (-4, -20))


def _place_labels(fig, ax, labels: list[tuple[str, float, float]], fontsize: float = 7.5) -> None:
    """Name each point beside it where the name overlaps no name placed before (the first of a few offsets that
    fits); a point whose every offset collides is left unnamed rather than written over another name."""
    renderer = fig.canvas.get_renderer()
    placed = []
    for text, x, y in labels:
        for dx, dy in _LABEL_OFFSETS:
            a = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy), fontsize=fontsize,
                            ha="left" if dx > 0 else "right")
            box = a.get_window_extent(renderer).expanded(1.02, 1.05)
            if not any(box.overlaps(b) for b in placed):
                placed.append(box)
                break
            a.remove()


def hardware_generations(ctx, out: Path) -> tuple[str, str]:
    """Hardware ratio R and HBM drain time for every catalog chip, by year."""
    plt = _plt()
    chips = [ctx.chip(n) for n in ctx.names("chip")]
    chips = [c for c in chips if c.year]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13.5, 5.4), constrained_layout=True)
    jitter = {}
    labels1, labels2 = [], []
    for c in sorted(chips, key=lambda c: (c.year, c.name)):
        k = jitter.setdefault(c.year, 0)
        jitter[c.year] += 1
        x = c.year + (k - 1.5) * 0.12
        nvidia = c.vendor.lower().startswith("nvidia")
        col = _GREEN if nvidia else (_BLUE if "google" in c.vendor.lower() else _GREY)
        r_bf16 = hardware_ratio(c.peak("bf16"), c.hbm_bandwidth_bytes_per_s, 2.0)
        low = next(p for p in ("fp4", "fp8", "w8a8", "bf16", "fp16")  # V100: fp16 only
                   if COMPUTE_FORMAT.get(p, p) in c.peak_flop_per_s)
        r_low = hardware_ratio(c.peak(low), c.hbm_bandwidth_bytes_per_s, arch.bytes_per(low))
        ax1.scatter([x], [r_bf16], color=col, s=40, zorder=3)
        if abs(r_low - r_bf16) > 1:
            ax1.plot([x, x], [r_bf16, r_low], color=col, lw=1, alpha=0.6)
            ax1.scatter([x], [r_low], color=col, s=40, marker="^", zorder=3)
        labels1.append((c.name, x, max(r_bf16, r_low)))
        d = drain_time(c.hbm_capacity_bytes, c.hbm_bandwidth_bytes_per_s)
        ax2.scatter([x], [d * 1e3], color=col, s=40, zorder=3)
        labels2.append((c.name, x, d * 1e3))
    said_R = ctx.said("R6").get("said_value")
    if said_R:
        ax1.axhline(said_R, color=_RED, ls="--", lw=1.2)
        ax1.text(ax1.get_xlim()[0] + 0.05, said_R * 1.03, f"lecture: ≈{fmt(said_R)}", color=_RED)
    ax2.axhspan(15, 20, color=_RED, alpha=0.08, lw=0)
    ax2.text(ax2.get_xlim()[0] + 0.05, 20.5, "lecture: 15–20 ms", color=_RED)
    ax1.set_ylabel("R = multiplies per parameter byte fetched")
    ax1.set_title("Hardware ratio R by chip year\n(● BF16-equivalent, ▲ at the chip's narrowest format)")
    ax2.set_ylabel("HBM drain time = capacity ÷ bandwidth (ms)")
    ax2.set_title("HBM drain time by chip year\n(the 'train departs every ~20 ms')")
    for ax in (ax1, ax2):
        ax.set_xlabel("year")
        ax.grid(True, alpha=0.25)
    _place_labels(fig, ax1, labels1)
    _place_labels(fig, ax2, labels2)
    ax1.scatter([], [], color=_GREEN, label="NVIDIA")
    ax1.scatter([], [], color=_BLUE, label="Google TPU")
    ax1.scatter([], [], color=_GREY, label="other")
    ax1.legend(loc="upper left")
    name = "hardware_ratio_and_drain.png"
    fig.savefig(out / name, dpi=130)
    plt.close(fig)
    return name, "Hardware ratio R and HBM drain time for every chip in the catalog, by year."


def memory_tiers(ctx, out: Path) -> tuple[str, str]:
    """Memory tiers by drain time and holding price, from `tokenmath kv`'s own plot."""
    try:
        from ..economics import kvtiers
        from ..cli.plots_kv import plot_tiers
    except ImportError:
        raise NotComputable("tokenmath.economics.kvtiers (memory tiers, issue 5) not in this build") from None
    rep = kvtiers.kv_report(lecture_media={"300": "flash", "3600": "HDD"})
    name = "memory_tiers.png"
    plot_tiers(rep, str(out / name))
    return name, ("`tokenmath kv`: every memory tier at (drain time = capacity ÷ bandwidth, USD per GB-hour), "
                  "with the 5-minute and 1-hour cache lifetimes and the lecture's drain times (hollow markers).")


def _wrapped(text: str, width: int) -> str:
    import textwrap
    return "\n".join(textwrap.wrap(text, width))


def domain_capacity(ctx, out: Path) -> tuple[str, str]:
    """Largest FP8 model each scale-up domain holds with the lecture's long-context batch in HBM."""
    plt = _plt()
    fm = ctx.lecture["reference"]["frontier_model"]
    try:
        m = ctx.model(fm)
    except Exception:
        raise NotComputable(f"model {fm!r} not in the catalog") from None
    B, S = ctx.said_input("E7", "B"), ctx.said_input("E7", "S")
    kv_batch = B * float(arch.kv_stored_bytes(m, S))
    rows = []
    for n in ctx.names("system"):
        s = ctx.system(n)
        cap = s.domain_chips * s.chip.hbm_capacity_bytes
        if s.domain_chips > 1024:
            continue
        rows.append((n, cap, max(cap - kv_batch, 0.0) / arch.bytes_per("fp8")))
    rows.sort(key=lambda t: (t[2], t[1]))
    full = [t for t in rows if t[2] <= 0]  # the KV cache alone fills them: named in one line, not drawn as empty bars
    rows = [t for t in rows if t[2] > 0]
    total = arch.param_counts(m).total
    fig, ax = plt.subplots(figsize=(10, 0.36 * len(rows) + 2.6), constrained_layout=True)
    y = np.arange(len(rows))
    ax.barh(y, [t[2] / 1e12 for t in rows], color=[_GREEN if t[2] >= total else _GREY for t in rows])
    ax.set_yticks(y, [f"{t[0]} ({fmt(t[1], 'B')} HBM)" for t in rows], fontsize=8.5)
    ax.axvline(total / 1e12, color=_RED, ls="--", lw=1.3)
    ax.text(total / 1e12 * 1.02, 0.5, f"{m.name}\n{fmt(total, 'params')}", color=_RED, va="center")
    ax.set_xlabel("largest FP8 model that fits (trillions of parameters, log scale)")
    ax.set_title(f"How big a model each scale-up domain can serve (FP8, 1 byte per parameter)\n"
                 f"HBM minus the KV cache of {fmt(B)} sequences × {fmt(S)} tokens of {m.name} ({fmt(kv_batch, 'B')})")
    ax.grid(True, axis="x", alpha=0.25)
    if full:
        note = (f"{len(full)} more domains hold less than this KV cache alone, up to {fmt(max(t[1] for t in full), 'B')} "
                f"of HBM (none fits): {', '.join(t[0] for t in full)}")
        ax.set_xlabel(f"largest FP8 model that fits (trillions of parameters, log scale)\n{_wrapped(note, 110)}",
                      fontsize=8.5)
    ax.set_xscale("log")  # 0.1 to 160 trillion: every bar visible
    name = "domain_capacity.png"
    fig.savefig(out / name, dpi=130)
    plt.close(fig)
    return name, (f"Largest FP8 model per scale-up domain (catalog systems up to 1,024 chips) after holding "
                  f"{fmt(B)} × {fmt(S)}-token KV caches of {m.name}.")


# name -> drawing function; claims refer to these names
PLOTS: dict[str, Callable] = {
    "cost_latency_vs_batch": batch_curves,
    "cost_vs_context": sweep_picture,
    "latency_cost_frontier": frontier_picture,
    "hardware_ratio": hardware_generations,
    "memory_tiers": memory_tiers,
    "domain_capacity": domain_capacity,
}


def draw_all(ctx, out: Path) -> dict[str, dict]:
    """Every picture: name -> {file, caption} or {missing: reason}."""
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, dict] = {}
    for key, fn in PLOTS.items():
        try:
            file, caption = fn(ctx, out)
            result[key] = {"file": file, "caption": caption}
        except NotComputable as e:
            result[key] = {"missing": str(e)}
        except Exception as e:  # a broken picture must not sink the report
            result[key] = {"missing": f"could not draw: {type(e).__name__}: {e}"}
    return result
