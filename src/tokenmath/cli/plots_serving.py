"""Pictures for the serving commands: cost vs batch, cost vs context, and the latency–cost frontier.

Matplotlib is imported lazily (Agg backend) so the commands start fast and need no display.
"""

from __future__ import annotations

import numpy as np

from ..core.units import fmt

__all__ = ["plot_sweep", "plot_frontier"]

_BLUE, _ORANGE, _GREEN, _RED, _PURPLE, _GREY = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#7f7f7f"
_BOX = dict(facecolor="white", alpha=0.85, edgecolor="none", pad=1.5)  # labels stay readable over curves


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 10.5, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 9,
                         "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _cost(sw):
    """Cost grid and its axis label: USD when the catalog has a price, chip-hours otherwise."""
    if sw.usd_per_mtok is not None:
        return np.asarray(sw.usd_per_mtok), "USD per million output tokens", "usd"
    return np.asarray(sw.chip_hours_per_mtok), "chip-hours per million output tokens (no price in catalog)", "chip_h"


def _money(x, kind):
    return fmt(x, "USD") if kind == "usd" else f"{fmt(x)} chip-h"


def _split_fit(ax, x, y, fits, color, label, lw=2.2):
    """Solid where the KV fits in HBM, dotted where it does not."""
    y_fit = np.where(fits, y, np.nan)
    y_out = np.where(fits, np.nan, y)
    # join the two pieces at the boundary
    edge = np.flatnonzero(np.diff(fits.astype(int)) != 0)
    for i in edge:
        y_out[i] = y[i] if np.isnan(y_out[i]) else y_out[i]
        y_out[i + 1] = y[i + 1]
    ax.plot(x, y_fit, color=color, lw=lw, label=label)
    ax.plot(x, y_out, color=color, lw=lw * 0.8, ls=":", alpha=0.8)


def plot_sweep(sw, path: str, floor_two_term=None) -> str:
    """Two panels: cost vs batch at the reference context; cost vs context at a few batches."""
    plt = _plt()
    cost, ylabel, kind = _cost(sw)
    v = sw.value
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.6), constrained_layout=True)
    title = (f"{sw.model.display_name or sw.model.name}\non {sw.G} × {sw.system.chip.display_name or sw.system.chip.name}"
             f" · {sw.precision} weights · {sw.kv_dtype} KV · {sw.basis} basis")
    fig.suptitle(title, fontsize=12.5)

    # ---- cost vs batch ------------------------------------------------------------------------
    j = int(np.argmin(np.abs(sw.context - sw.S_ref)))
    B, c, fits = sw.batch, cost[:, j], sw.fits[:, j]
    _split_fit(ax1, B, c, fits, _BLUE, f"roofline ({sw.basis}), context {fmt(sw.S_ref)} tok")
    floor = v("cost_floor_usd_per_mtok") if kind == "usd" else float(sw.floor_chip_hours_per_mtok_by_context[j])
    ax1.axhline(floor, color=_GREY, ls="--", lw=1.2)
    ax1.text(B[0] * 1.15, floor * 1.12, f"floor c_min = {_money(floor, kind)} (B → ∞)", color=_GREY, va="bottom")
    Bs, Bb, Bm = v("optimal_batch"), v("balance_batch"), v("memory_batch_limit")
    ymax = np.nanmax(c)
    ax1.axvline(Bs, color=_ORANGE, lw=1.5)
    ax1.text(Bs * 1.08, ymax, f"B* = R·ρ\n= {fmt(Bs)}", color=_ORANGE, va="top", bbox=_BOX)
    if Bb is not None and np.isfinite(Bb) and Bb <= B[-1] * 4:
        ax1.axvline(Bb, color=_GREEN, lw=1.5)
        ax1.text(Bb * 1.08, ymax / 6, f"B_bal = B*/(1−κ)\n= {fmt(Bb)}", color=_GREEN, va="top", bbox=_BOX)
    else:
        ax1.text(Bs * 1.08, ymax / 40, f"κ = {fmt(v('kappa'))} ≥ 1:\nno batch is compute-bound", color=_GREEN, va="top",
                 bbox=_BOX)
    if Bm is not None and np.isfinite(Bm) and Bm < B[-1]:
        ax1.axvspan(max(Bm, B[0]), B[-1], color=_RED, alpha=0.07, lw=0)
        ax1.text(np.sqrt(max(Bm, B[0]) * B[-1]), np.sqrt(ymax * floor), f"weights + KV exceed HBM\nbeyond B = {fmt(Bm)}",
                 color=_RED, ha="center", va="center", rotation=90, fontsize=9)
    ratio = v("c1_over_cmin")
    ax1.annotate(f"batch 1 costs {fmt(ratio)}× the floor", xy=(B[0], c[0]), xytext=(B[0] * 3, c[0] * 1.05),
                 arrowprops=dict(arrowstyle="->", color=_BLUE, lw=1), color=_BLUE, va="bottom")
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_ylim(top=ymax * 2.5)
    ax1.set_xlabel("batch B (sequences decoded per step)")
    ax1.set_ylabel(ylabel)
    ax1.set_title(f"Cost vs batch at context {fmt(sw.S_ref)} tok:\na hyperbola (weights shared by B) on a floor"
                  " (compute, KV)")
    ax1.grid(True, which="major", alpha=0.25)

    # ---- cost vs context ----------------------------------------------------------------------
    S = sw.context
    order = np.argsort(S)
    S = S[order]
    picks = _pick_batches(sw.batch, Bs)
    colors = [_PURPLE, _BLUE, _ORANGE, _GREEN]
    for col, b in zip(colors, picks):
        i = int(np.argmin(np.abs(sw.batch - b)))
        _split_fit(ax2, S, cost[i, order], sw.fits[i, order], col, f"B = {fmt(sw.batch[i])}", lw=2.0)
    fl = (sw.floor_usd_per_mtok_by_context if kind == "usd" else sw.floor_chip_hours_per_mtok_by_context)[order]
    ax2.plot(S, fl, color=_GREY, ls="--", lw=1.4, label="floor c_min(S): no batch beats it")
    Ls, Lr = v("kv_crossover_context"), v("kv_crossover_context_roofline")
    ytop = np.nanmax(cost[[int(np.argmin(np.abs(sw.batch - b))) for b in picks]][:, order])
    if Ls and S[0] <= Ls <= S[-1]:
        ax2.axvline(Ls, color=_RED, lw=1.5)
        ax2.text(Ls * 1.08, ytop, f"L* = 2·N_act·W/(F·kv)\n= {fmt(Ls)} tok\n(KV read = compute)", color=_RED,
                 va="top", bbox=_BOX)
    if Lr and S[0] <= Lr <= S[-1] and (not Ls or abs(Lr / Ls - 1) > 0.15):
        ax2.axvline(Lr, color=_RED, lw=1.0, ls="-.")
        ax2.text(Lr * 1.08, ytop / 8, f"with attention FLOP\n= {fmt(Lr)} tok", color=_RED, va="top", fontsize=9,
                 bbox=_BOX)
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_ylim(top=ytop * 2.5)
    ax2.set_xlabel("context S (tokens of KV per sequence)")
    ax2.set_ylabel(ylabel)
    ax2.set_title("Cost vs context: past L* the KV wall sets the floor\n(each batch's curve bends up; none beats"
                  " the dashed floor)")
    ax2.grid(True, which="major", alpha=0.25)
    ax2.plot([], [], color=_GREY, ls=":", lw=1.6, label="dotted: weights + KV exceed HBM")
    ax2.legend(loc="lower right")
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def _pick_batches(batch: np.ndarray, B_star: float) -> list[float]:
    want = [16.0, 256.0, B_star, 8 * B_star]
    out: list[float] = []
    for w in want:
        b = float(batch[int(np.argmin(np.abs(np.log(batch) - np.log(max(w, 1)))))])
        if b not in out:
            out.append(b)
    return out


def plot_frontier(fr, path: str) -> str:
    """Latency per output token vs cost per token: every batch, the Pareto frontier, standard and fast."""
    plt = _plt()
    kind = "usd" if fr.usd_per_mtok is not None else "chip_h"
    cost = np.asarray(fr.usd_per_mtok if kind == "usd" else fr.chip_hours_per_mtok)
    lat = np.asarray(fr.step_time_s) * 1e3
    fig, ax = plt.subplots(figsize=(9.5, 6.2), constrained_layout=True)
    fits = np.asarray(fr.fits, dtype=bool)
    ax.scatter(lat[fits], cost[fits], s=10, color=_GREY, alpha=0.5, label="every batch that fits in HBM", zorder=1)
    if (~fits).any():
        ax.scatter(lat[~fits], cost[~fits], s=12, color=_GREY, marker="x", alpha=0.5,
                   label="batches whose KV does not fit", zorder=1)
    f = fr.frontier_index
    ax.plot(lat[f], cost[f], color=_BLUE, lw=2.4, marker="o", ms=3.5, label="Pareto frontier (faster ⇒ dearer)",
            zorder=2)
    on_roofline = "standard_roofline" in fr.points
    pts = {"standard": fr.points.get("standard_roofline" if on_roofline else "standard"),
           "fast": fr.points.get("fast_roofline" if on_roofline else "fast")}
    marked = [pt["batch"] for pt in pts.values() if pt]
    for i in f[:: max(1, len(f) // 6)]:
        if any(abs(np.log(fr.batch[i] / b)) < np.log(3) for b in marked):
            continue  # keep the marked points' labels readable
        ax.annotate(f"B={fmt(fr.batch[i])}", (lat[i], cost[i]), textcoords="offset points", xytext=(7, 3),
                    fontsize=8.5, color=_BLUE)
    for key, color, label in (("standard", _GREEN, "standard"), ("fast", _RED, "fast mode")):
        pt = pts.get(key)
        if not pt:
            continue
        x, y = pt["step_time_s"] * 1e3, pt["usd_per_mtok" if kind == "usd" else "chip_hours_per_mtok"]
        ax.scatter([x], [y], s=140, color=color, zorder=5, edgecolor="white", lw=1.5)
        txt = f"{label}: B = {fmt(pt['batch'])}\n{fmt(pt['step_time_s'], 's')}/token, {_money(y, kind)}/Mtok"
        ax.annotate(txt, (x, y), textcoords="offset points", xytext=(14, 8) if key == "fast" else (10, 22),
                    color=color, fontsize=10, fontweight="bold")
    if pts["standard"] and pts["fast"]:
        s, q = pts["standard"], pts["fast"]
        sy = s["usd_per_mtok" if kind == "usd" else "chip_hours_per_mtok"]
        fy = q["usd_per_mtok" if kind == "usd" else "chip_hours_per_mtok"]
        ax.annotate("", xy=(q["step_time_s"] * 1e3, fy), xytext=(s["step_time_s"] * 1e3, sy),
                    arrowprops=dict(arrowstyle="->", color=_RED, lw=1.6, ls="--"))
        ax.text(0.30, 0.96, f"batch ÷ {fmt(s['batch'] / q['batch'])}  ⇒  price × {fmt(fy / sy)},  speed × "
                f"{fmt(s['step_time_s'] / q['step_time_s'])}\n(roofline, {fr.basis} basis; model-free batch ratio "
                f"1/(p·s))", transform=ax.transAxes, color=_RED, fontsize=10.5, va="top")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("latency per output token = decode step time (ms)")
    ax.set_ylabel("USD per million output tokens" if kind == "usd" else "chip-hours per million output tokens")
    ax.set_title(f"Latency–cost frontier: {fr.model.name} on {fr.G} × {fr.system.chip.name}, context "
                 f"{fmt(fr.S)} tok\nfast mode = the same frontier at a smaller batch")
    ax.grid(True, which="major", alpha=0.25)
    ax.legend(loc="center right")
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path
