"""`tokenmath calibrate`: measure this machine per number format and kernel class into a hardware profile."""

from __future__ import annotations

import numpy as np
import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..core.units import fmt
from ..measure.calibrate import FORMAT_BYTES, calibrate, profile_dict, write_profile
from .common import EXPLAIN_OPTION, JSON_OPTION, console, emit_json, err_console, fail, guard


def register(app: typer.Typer) -> None:
    @app.command("calibrate")
    @guard
    def calibrate_cmd(
        out: str = typer.Option("profile.yaml", "--out", "-o", help="Where to write the profile YAML."),
        quick: bool = typer.Option(False, "--quick", help="Fewer shapes and sizes, two rounds: under a minute."),
        backend: str = typer.Option("auto", "--backend", help="'auto' (PyTorch if installed, else NumPy), "
                                    "'torch' or 'numpy'."),
        formats: str = typer.Option(None, "--formats", help="Only these formats, e.g. fp32,bf16 (default: every "
                                    "format the backend runs)."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        kernel_tables: str = typer.Option(None, "--from-kernel-tables", metavar="PATH|installed",
                                          help="Instead: re-derive catalog priors from measured kernel tables "
                                               "(aiconfigurator-core; --out is then a folder, default the catalog)."),
        chips: str = typer.Option(None, "--chips", help="With --from-kernel-tables: only these catalog chips."),
    ) -> None:
        """Per format: GEMMs by rows, attention decode, elementwise and routing ops, memory tiers -> a profile."""
        if kernel_tables:
            from .calibrate_kernels import from_kernel_tables
            return from_kernel_tables(kernel_tables, None if out == "profile.yaml" else out, chips, as_json)
        if backend not in ("auto", "torch", "numpy"):
            fail(f"--backend must be auto, torch or numpy (got {backend!r})")
        if not out.endswith((".yaml", ".yml")):
            fail(f"--out {out!r}: the profile is YAML; give a path ending in .yaml")
        want = [f.strip() for f in formats.split(",") if f.strip()] if formats else None
        if want is not None:
            bad = [f for f in want if f not in FORMAT_BYTES]
            if bad or not want:
                fail(f"--formats: unknown {', '.join(bad) or 'empty list'}; choose from {', '.join(FORMAT_BYTES)}")
        try:
            if as_json:
                c = calibrate(quick=quick, prefer=backend, formats=want)
            else:
                with Progress(SpinnerColumn(), TextColumn("{task.description:<48}"), BarColumn(),
                              TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(), console=err_console,
                              transient=True) as bar:
                    task = bar.add_task("calibrating", total=1.0)
                    c = calibrate(quick=quick, prefer=backend, formats=want,
                                  progress=lambda what, frac: bar.update(task, description=what[:48], completed=frac))
        except ImportError:
            fail("--backend torch: PyTorch is not installed (pip install 'torch==2.13.0', the 'torch' extra)")
        write_profile(out, c)
        if as_json:
            d = c.to_dict()
            d["profile"] = out
            emit_json(d)
            return
        _print(c, out)
        if explain:
            _explain(c)


def _curve_at(c, key: str, x: float, unit: str = "") -> str:
    cv = c.curves.get(key)
    if not cv:
        return ""
    v = float(np.interp(np.log(x), np.log(cv["x"]), cv["y"]))
    return fmt(v, unit) if unit else f"{v:.3g}"


def _spread(c, f: str) -> str:
    s = [v for k, cv in c.curves.items() if k.endswith("." + f) for v in cv["spread"]]
    return f"{max(s):.0%}" if s else ""


def _print(c, out: str) -> None:
    console.print(f"Measured on {c.host} ({c.device}, {c.backend}) at {c.date} in {c.seconds:.0f} s", markup=False)
    console.print(f"memory: W = {fmt(c.bandwidth_bytes_per_s, 'B/s')}"
                  + (f", cache C = {fmt(c.llc_bytes, 'B')} at W_c = {fmt(c.llc_bandwidth_bytes_per_s, 'B/s')}"
                     if c.llc_bytes else ""), markup=False)
    t = Table(title="per format: the tables (read in log space between the points measured)", title_justify="left")
    t.add_column("")
    for f in c.formats:
        t.add_column(f, justify="right")
    rows = [("peak F (best GEMM)", lambda f: fmt(c.peaks[f], "FLOP/s"))]
    rows += [(f"eta_bw  weights cold, M={M}", (lambda f, M=M: _curve_at(c, f"eta_bw.{f}", M))) for M in (1, 16, 256)]
    rows += [(f"eta_mm  FLOP in cache, M={M}", (lambda f, M=M: _curve_at(c, f"eta_mm.{f}", M))) for M in (1, 16, 256)]
    rows += [("t_kernel  one GEMM call, M=1", lambda f: _curve_at(c, f"t_kernel.{f}", 1, "s")),
             ("eta_kv_bytes  attention, 1 MB/call", lambda f: _curve_at(c, f"eta_kv_bytes.{f}", 1e6)),
             ("eta_kv_bytes  attention, 64 MB/call", lambda f: _curve_at(c, f"eta_kv_bytes.{f}", 64e6)),
             ("eta_gqa  G=4 query heads per KV head", lambda f: _curve_at(c, f"eta_gqa.{f}", 4)),
             ("t_elt  elementwise kernel, 64 kB", lambda f: _curve_at(c, f"t_elt.{f}", 65536, "s")),
             ("t_route  MoE routing op, 8 kB", lambda f: _curve_at(c, f"t_route.{f}", 8192, "s")),
             ("largest spread (repeats)", lambda f: _spread(c, f))]
    for label, get in rows:
        t.add_row(label, *[get(f) for f in c.formats])
    console.print(t)
    console.print(f"host: {fmt(c.dispatch_s, 's')} per eager op"
                  + (f", {fmt(c.route_dispatch_s, 's')} per MoE routing call, {fmt(c.expert_dispatch_s, 's')} per "
                     f"call of an expert hit" if c.route_dispatch_s else "")
                  + (" (the device runs behind the host)" if c.host_overlap else " (added to the device work)"),
                  markup=False)
    fit = c.fit
    console.print(f"fitted priors ({c.main}): eta_flop {fit['eta_flop']:.2f}, eta_bw {fit['eta_bw']:.2f}, M_half "
                  f"{fit['matmul_m_half']:g} rows, t_kernel {fmt(fit['kernel_overhead_s'], 's')} — reproduce the "
                  f"{fit['n']} cold GEMMs with median |error| {fit['median_abs_error']:.1%}, p90 "
                  f"{fit['p90_abs_error']:.1%}", markup=False)
    console.print(f"wrote {out}: use it as `--on {out}` (e.g. tokenmath check-local MODEL --profile {out})",
                  markup=False)


def _explain(c) -> None:
    console.print("\nper GEMM: t = max(FLOP / (F · eta_mm(M)), bytes_w / (W_eff · eta_bw(M))) + t_kernel; "
                  "W_eff = 1 / (h/W_c + (1 − h)/W), h = min(1, C / working set)  (tokenmath.core.kernels)", markup=False)
    console.print("attention decode: t = B·kv / (W_eff · eta_kv_bytes(bytes per call) · eta_gqa(N/K)); eager ops: "
                  "n_ops · t_dispatch + Σ n_op · t_elt(bytes_op)  (tokenmath.core.eager)", markup=False)
    pri = profile_dict(c)["priors"]
    for k, v in pri.items():
        if k in ("curves", "formats"):
            continue
        console.print(f"  {k} = {v['value']}: {v['source']}", markup=False)
    for k, cv in c.curves.items():
        pts = ", ".join(f"{x:g}→{y:.3g}" for x, y in zip(cv["x"], cv["y"]))
        console.print(f"  {k}: {pts}  ({cv['source']})", markup=False)
