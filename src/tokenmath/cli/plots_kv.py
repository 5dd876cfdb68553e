"""The picture for `tokenmath kv`: memory tiers by drain time against holding price, log-log.

Each tier is a point at (capacity / bandwidth, USD per GB-hour); a dated purchase price that moved
draws a line from its earliest to its latest price. Vertical lines mark the hold times; hollow markers
are the lecture's drain times for each medium (K2), joined to the catalog's. Matplotlib is imported
lazily (Agg backend).
"""

from __future__ import annotations

import math

from ..economics.kvtiers import tier_rows
from ..core.units import fmt

__all__ = ["plot_tiers"]

COLORS = {"HBM": "#d62728", "DRAM": "#1f77b4", "flash": "#2ca02c", "HDD": "#7f7f7f"}


def plot_tiers(report, path: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in report.rows if r.hold_price is not None]
    first = {r.name: r for r in tier_rows("1900")}  # every tier at its earliest dated price
    fig, ax = plt.subplots(figsize=(11, 7.4), constrained_layout=True)
    for medium, color in COLORS.items():
        pts = [r for r in rows if r.tier.medium == medium]
        if pts:
            ax.scatter([r.drain_s for r in pts], [r.hold_price for r in pts], s=46, color=color, zorder=3,
                       label=f"{medium}")
    for r in rows:
        e = first.get(r.name)
        if e is not None and e.hold_price and r.basis == "purchase" and abs(e.hold_price / r.hold_price - 1) > 0.05:
            ax.plot([r.drain_s, r.drain_s], [e.hold_price, r.hold_price], color=COLORS[r.tier.medium], lw=1.2,
                    alpha=0.5, zorder=2)
            ax.scatter([r.drain_s], [e.hold_price], s=22, facecolors="none", edgecolors=COLORS[r.tier.medium],
                       zorder=2)
    _label(ax, rows)
    for T in report.hold_times_s:
        ax.axvline(T, color="black", lw=1, ls="--", alpha=0.6)
        ax.text(T * 1.08, 0.97, f"hold {fmt(T, 's')}", transform=ax.get_xaxis_transform(), fontsize=9, va="top")
    _lecture_claims(ax, report.rows)
    ax.set_xscale("log")
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 12)  # room for the slanted labels above the top points
    left, right = ax.get_xlim()
    ax.set_xlim(left, right * 4)
    ax.set_xlabel("drain time = capacity / read bandwidth (s)")
    ax.set_ylabel("holding price, USD per GB-hour")
    date = report.price_date or "latest"
    ax.set_title("KV-cache tiers: the cheapest tier for a hold time T is the one that drains in about T\n"
                 f"HBM at chip rental per GB; others at purchase price over service life (prices: {date}; "
                 "hollow: earliest dated price)", fontsize=11)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper right", fontsize=9)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def _label(ax, rows) -> None:
    """Name each point (slanted); the tight HBM cluster gets a stacked list with leader lines."""
    hbm = sorted((r for r in rows if r.tier.medium == "HBM"), key=lambda r: -r.hold_price)
    if hbm:
        x_text = max(r.drain_s for r in hbm) * 2.2
        y_top = max(r.hold_price for r in hbm) * 1.6
        for i, r in enumerate(hbm):
            ax.annotate(r.name, (r.drain_s, r.hold_price), xytext=(x_text, y_top / 1.42 ** i), fontsize=7.5,
                        color=COLORS["HBM"], va="center",
                        arrowprops=dict(arrowstyle="-", color=COLORS["HBM"], lw=0.5, alpha=0.5))
    groups: dict[tuple[int, int], list] = {}
    for r in rows:
        if r.tier.medium == "HBM":
            continue
        key = (round(math.log10(r.drain_s) * 8), round(math.log10(r.hold_price) * 4))
        groups.setdefault(key, []).append(r)
    for rs in groups.values():
        r = rs[0]
        text = r.name if len(rs) == 1 else f"{rs[0].name} (+{len(rs) - 1})"
        ax.annotate(text, (r.drain_s, r.hold_price), xytext=(2, 7), textcoords="offset points", fontsize=7.5,
                    color=COLORS[r.tier.medium], rotation=55, rotation_mode="anchor")


def _lecture_claims(ax, rows) -> None:
    """The lecture's drain time per medium (hollow diamond) joined to the catalog's tiers of that medium."""
    seen = set()
    for r in rows:
        claim = r.tier.lecture_drain_claim_s
        if not claim or r.hold_price is None or r.tier.medium in seen:
            continue
        seen.add(r.tier.medium)
        same = [x for x in rows if x.tier.medium == r.tier.medium and x.hold_price is not None]
        y = min(x.hold_price for x in same)
        hi = r.tier.lecture_drain_claim_high_s or claim
        x_claim = math.sqrt(claim * hi)
        x_real = math.sqrt(min(x.drain_s for x in same) * max(x.drain_s for x in same))
        ax.scatter([x_claim], [y], marker="D", s=60, facecolors="none", edgecolors=COLORS[r.tier.medium], zorder=4)
        if abs(math.log10(x_real / x_claim)) > 0.5:
            ax.annotate("", xy=(x_real, y), xytext=(x_claim, y),
                        arrowprops=dict(arrowstyle="->", color=COLORS[r.tier.medium], lw=1.2, alpha=0.8))
            ax.annotate(f"lecture: {r.tier.medium} ~{fmt(x_claim, 's')}", (x_claim, y), xytext=(-10, -14),
                        textcoords="offset points", fontsize=8, color=COLORS[r.tier.medium], ha="right")
