"""`tokenmath calibrate`: measure this machine and write a hardware profile for `--on PROFILE.yaml`."""

from __future__ import annotations

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..measure.calibrate import calibrate, profile_dict, write_profile
from ..core.units import fmt
from .common import EXPLAIN_OPTION, JSON_OPTION, console, emit_json, err_console, fail, guard


def register(app: typer.Typer) -> None:
    @app.command("calibrate")
    @guard
    def calibrate_cmd(
        out: str = typer.Option("profile.yaml", "--out", "-o", help="Where to write the profile YAML."),
        quick: bool = typer.Option(False, "--quick", help="Small buffers and few shapes: seconds, for tests."),
        backend: str = typer.Option("auto", "--backend", help="'auto' (PyTorch if installed, else NumPy), "
                                    "'torch' or 'numpy'."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        kernel_tables: str = typer.Option(None, "--from-kernel-tables", metavar="PATH|installed",
                                          help="Instead: re-derive catalog priors from measured kernel tables "
                                               "(aiconfigurator-core; --out is then a folder, default the catalog)."),
        chips: str = typer.Option(None, "--chips", help="With --from-kernel-tables: only these catalog chips."),
    ) -> None:
        """Matmul FLOP/s by shape, streaming and attention-decode bandwidth, per-op overhead -> a profile."""
        if kernel_tables:
            from .calibrate_kernels import from_kernel_tables
            return from_kernel_tables(kernel_tables, None if out == "profile.yaml" else out, chips, as_json)
        if backend not in ("auto", "torch", "numpy"):
            fail(f"--backend must be auto, torch or numpy (got {backend!r})")
        if not out.endswith((".yaml", ".yml")):
            fail(f"--out {out!r}: the profile is YAML; give a path ending in .yaml")
        try:
            if as_json:
                c = calibrate(quick=quick, prefer=backend)
            else:
                with Progress(TextColumn("{task.description:<40}"), BarColumn(), TimeElapsedColumn(),
                              console=err_console, transient=True) as bar:
                    task = bar.add_task("calibrating", total=1.0)
                    c = calibrate(quick=quick, prefer=backend,
                                  progress=lambda what, frac: bar.update(task, description=what, completed=frac))
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


def _print(c, out: str) -> None:
    t = Table(title=f"Measured on {c.host} ({c.device}, {c.backend}) at {c.date}", title_justify="left")
    for col in ("what", "shape", "time", "rate", "bandwidth"):
        t.add_column(col, justify="left" if col in ("what", "shape") else "right")
    for m in c.measurements:
        t.add_row(m.what, "×".join(map(str, m.shape)), fmt(m.seconds, "s"),
                  fmt(m.flop_per_s, "FLOP/s") if m.flop else "", fmt(m.bytes_per_s, "B/s") if m.bytes else "")
    console.print(t)
    console.print(f"peak {c.dtype} matmul F = {fmt(c.peak_flop_per_s, 'FLOP/s')}; read bandwidth W = "
                  f"{fmt(c.bandwidth_bytes_per_s, 'B/s')}; memory {fmt(c.memory_bytes, 'B')}", markup=False)
    console.print(f"fitted priors: eta_flop {c.eta_flop:.2f}, eta_bw {c.eta_bw:.2f}, t_kernel "
                  f"{fmt(c.kernel_overhead_s, 's')}, M_half {c.matmul_m_half:g} rows; attention decode streams KV at "
                  f"{c.attention_bytes_per_s / c.bandwidth_bytes_per_s:.2f} of W (eta_kv); per-op overhead "
                  f"{fmt(c.op_overhead_s, 's')}", markup=False)
    console.print(f"the fit reproduces the matmul timings with median |error| {c.fit_median_abs_error:.1%}, "
                  f"p90 {c.fit_p90_abs_error:.1%}", markup=False)
    console.print(f"wrote {out}: use it as `--on {out}` (e.g. tokenmath check-local MODEL --profile {out})",
                  markup=False)


def _explain(c) -> None:
    console.print("\nper matmul: t = max(2·M·N·K / (F · eta_flop · M/(M + M_half·[M>1])), bytes / (W · eta_bw)) "
                  "+ t_kernel  (tokenmath.core.kernels)", markup=False)
    pri = profile_dict(c)["priors"]
    for k, v in pri.items():
        console.print(f"  {k} = {v['value']}: {v['source']}", markup=False)
