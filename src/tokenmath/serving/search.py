"""Deployment search: the best layout of each model on each system under TTFT / TPOT objectives.

1. Enumerate (search_space.py): for every model × system × precision, every replica layout — chips,
   tp / ep / pp (dp replicas fill the deployment), for disagg the prefill : decode chips — whose
   weights and one request fit, each over a grid of concurrencies × prefill token budgets.
2. Evaluate every configuration with the closed-form steady state (sim/fastpath.py): one vectorised
   call per layout, many layouts per task; a runner (search_runners.py: a local process pool or Ray)
   runs the tasks, and their results are put back in the order they were planned.
3. Judge: a configuration meets the SLOs when its mean TTFT ≤ T_ttft and mean TPOT ≤ T_tpot; its cost
   is serve.usd_per_mtok over one second of output,
       usd_per_mtok = G · usd_per_chip_hour / 3600 · t / T · 1e6      (t = 1 s, T = output tokens in it)
4. Confirm: per (model, system), the best operating point of each of the `confirm` best layouts that
   meet the SLOs (most tokens/s per chip; then fewer chips, lower concurrency) is run through the
   simulator (sim/run.py: a closed loop at its concurrency, the fixed lengths or the workload's; each
   client's first request, which starts with every other at t = 0, is left out of the verdict), and
   `best` is the candidate with the most simulated tokens/s per chip whose simulated mean TTFT and TPOT
   meet the SLOs. Where none does (the closed form is optimistic for lengths that vary, and its disagg
   TTFT is a lower bound), round r (up to `rounds`) asks the closed form for 0.85^r of each SLO. A
   configuration that misses an SLO in either is never `best`.

Within one (model, system) the chips' price is one number, so the per-chip and cost objectives pick
the same layout there; the objective decides `best_per_model`, across systems (cost: the systems with a
rental price in the catalog).

Determinism: the plan, the tasks and the confirmation seeds are fixed by the inputs, and every
ranking breaks ties on the configuration's id, so the answers do not depend on what ran the tasks.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.errors import InputError
from ..core.load import load_engine, load_priors
from .search_space import POLICIES, Group, Space, Target, enumerate_groups, pipeline_system
from .serve import interval_ends, interval_phase, prior_interval_scale, usd_per_mtok
from .sim import Workload, simulate, steady_state
from .sim.metrics import stats

__all__ = ["SearchSpec", "SearchResult", "search", "evaluate_task", "confirm_task", "COLUMNS", "OBJECTIVES",
           "derivation"]

OBJECTIVES = ("per-chip", "cost")
GROUPS_PER_TASK = 12
HEADROOM = 0.85  # round r of confirmations asks the closed form for HEADROOM^r under the SLOs

# Every column of the results (Parquet table `results`): type and meaning. Null where it does not apply.
COLUMNS: dict[str, tuple[str, str]] = {
    "config_id": ("int", "the configuration's place in the plan (deterministic)"),
    "group_id": ("int", "its layout's place in the plan"),
    "model": ("str", "catalog model"), "system": ("str", "catalog system"), "chip": ("str", "the system's chip"),
    "precision": ("str", "weights and matmuls"), "kv_dtype": ("str", "KV-cache element type"),
    "policy": ("str", "scheduler: continuous (prefill first), disagg, cadence"),
    "layout": ("str", "the layout in words, e.g. 'continuous tp4·pp2', 'disagg 2P+8D'"),
    "chips": ("int", "chips of one replica (disagg: both pools)"),
    "tp": ("int", "tensor-parallel ways (disagg: the decode pool's)"),
    "ep": ("int", "expert-parallel ways (disagg: the decode pool's)"), "pp": ("int", "pipeline stages"),
    "stage_chips": ("int", "tp · ep: chips of one pipeline stage"),
    "prefill_chips": ("int", "disagg: chips of the prefill pool"),
    "decode_chips": ("int", "disagg: chips of the decode pool"),
    "replicas": ("int", "dp: replicas filling the deployment, floor(max_chips / chips)"),
    "deployment_chips": ("int", "replicas · chips"),
    "concurrency": ("int", "requests in flight per replica (closed loop)"),
    "max_num_tokens": ("float", "token budget of a prefill step (prompts per step = max(1, floor(budget / ISL)))"),
    "isl": ("float", "prompt tokens per request (a workload: its mean)"),
    "osl": ("float", "output tokens per request (a workload: its mean)"),
    "weights_per_chip_bytes": ("float", "weights on each chip (placement.weights_per_chip)"),
    "batch_cap": ("int", "sequences in flight a replica's KV holds (and the engine's cap)"),
    "batch": ("float", "sequences decoding per replica"),
    "prefill_batch": ("float", "prompts per prefill step"),
    "decode_step_s": ("float", "one decode step (cadence: the train's period)"),
    "prefill_step_s": ("float", "one prefill step"),
    "output_tokens_per_s": ("float", "output tokens per second of one replica"),
    "tokens_per_s_per_chip": ("float", "output_tokens_per_s / chips"),
    "tokens_per_s_per_user": ("float", "1 / tpot_s"),
    "ttft_s": ("float", "mean time to first token (closed form)"),
    "tpot_s": ("float", "mean time per output token after the first (closed form)"),
    "e2e_s": ("float", "mean time in the system per request"),
    "requests_per_s": ("float", "requests finished per second per replica"),
    "deployment_tokens_per_s": ("float", "replicas · output_tokens_per_s"),
    "usd_per_chip_hour": ("float", "the catalog's rental price of one chip"),
    "usd_per_mtok": ("float", "USD per million output tokens at that price, fully busy"),
    "slo_ttft_s": ("float", "the TTFT objective"), "slo_tpot_s": ("float", "the TPOT objective"),
    "meets_ttft": ("bool", "ttft_s ≤ slo_ttft_s (true without one)"),
    "meets_tpot": ("bool", "tpot_s ≤ slo_tpot_s (true without one)"),
    "meets_slo": ("bool", "meets_ttft and meets_tpot"),
    "confirmed": ("bool", "run through the simulator"),
    "sim_requests": ("int", "requests simulated"),
    "sim_ttft_s": ("float", "simulated mean TTFT (each client's first request, the cold start, left out)"),
    "sim_ttft_p90_s": ("float", "simulated p90 TTFT (likewise)"), "sim_ttft_p95_s": ("float", "simulated p95 TTFT"),
    "sim_ttft_p99_s": ("float", "simulated p99 TTFT"),
    "sim_tpot_s": ("float", "simulated mean TPOT (likewise)"), "sim_tpot_p90_s": ("float", "simulated p90 TPOT"),
    "sim_tpot_p95_s": ("float", "simulated p95 TPOT"),
    "sim_tokens_per_s_per_chip": ("float", "simulated output tokens/s per chip (the whole run)"),
    "sim_tokens_per_s_per_user": ("float", "simulated mean tokens/s per user (1 / TPOT, cold start left out)"),
    "sim_meets_slo": ("bool", "simulated mean TTFT and TPOT meet the SLOs"),
    "best": ("bool", "the best configuration of its (model, system)"),
}
_SIM_KEYS = ("sim_requests", "sim_ttft_s", "sim_ttft_p90_s", "sim_ttft_p95_s", "sim_ttft_p99_s", "sim_tpot_s",
             "sim_tpot_p90_s", "sim_tpot_p95_s", "sim_tokens_per_s_per_chip", "sim_tokens_per_s_per_user", "sim_meets_slo")


_PREDICTED = ("decode_step_s", "prefill_step_s", "output_tokens_per_s", "tokens_per_s_per_chip", "tokens_per_s_per_user",
              "ttft_s", "tpot_s", "e2e_s", "requests_per_s", "deployment_tokens_per_s", "usd_per_mtok",
              *(k for k in _SIM_KEYS if k.endswith("_s") or "_per_s_" in k))
_STEP_PHASES = {"decode_step_s": "decode", "prefill_step_s": "prefill"}


def row_intervals(row: dict, pri, precision: str) -> dict:
    """80 % intervals of a configuration's predicted steps, rates, times and cost, closed form and simulated alike,
    from serve's residual groups: a step its phase's, a quantity under load the group validate keys its rows to
    (serve.interval_phase: TTFT, decode for TPOT and per-user speed, run for the rest; a percentile its mean's);
    the cost ∝ chip time. {} where serve's groups do not apply (a calibrated profile: prior_interval_scale)."""
    out: dict = {}
    groups: dict = {}
    for k in _PREDICTED:
        if k not in row:
            continue
        base = re.sub(r"_p\d+_s$", "_s", k.removeprefix("sim_"))
        phase = _STEP_PHASES.get(base) or interval_phase(base)
        scale = prior_interval_scale(pri, "prior", phase, precision)
        if scale is None:
            continue
        out[f"{k}_interval"] = interval_ends(row[k], scale, rate="_per_s" in k)
        groups[phase] = scale[2]
    return out | ({"interval_groups": groups} if groups else {})


@dataclass(frozen=True)
class SearchSpec:
    """What to search: targets, lengths (or a workload's), objectives, and how far to look."""

    targets: tuple[Target, ...]
    isl: float
    osl: float
    workload: Workload | None = None  # lengths replayed by the confirming simulations
    slo_ttft: float | None = None
    slo_tpot: float | None = None
    objective: str = "per-chip"
    policies: tuple[str, ...] = ("continuous", "disagg")
    max_chips: int | None = None  # per deployment (default: one scale-up domain)
    budgets: tuple[float, ...] = (2048, 8192, 32768)
    confirm: int = 3
    rounds: int = 3
    requests: int | None = None
    seed: int = 0


@dataclass(frozen=True)
class Task:
    target: Target
    groups: tuple[Group, ...]
    first_group: int
    isl: float
    osl: float


@dataclass(frozen=True)
class Confirmation:
    target: Target
    group: Group
    concurrency: int
    budget: float
    isl: float
    osl: float
    requests: int
    workload: Workload | None
    slo_ttft: float | None
    slo_tpot: float | None
    seed: int


def _steady(t: Target, g: Group, U, K, isl, osl, explain: bool = False):
    """The closed form of group g at per-replica concurrencies U and budgets K, scaled from a pipeline stage."""
    kw = dict(isl=isl, osl=osl, spec=t.spec, precision=t.precision, kv_dtype=t.kv_dtype, priors=t.priors,
              engine=t.engine, explain=explain)
    if g.policy == "disagg":
        return steady_state(t.model, t.system, G=g.decode_chips, concurrency=U, policy="disagg",
                            prefill_chips=g.prefill_chips, decode_chips=g.decode_chips, max_batch=g.batch_cap,
                            max_num_tokens=K, **kw)
    return steady_state(t.model, pipeline_system(t.system, g.pp), G=g.stage_chips, concurrency=np.asarray(U) / g.pp,
                        policy=g.policy, layout=g.layout, max_batch=g.batch_cap // g.pp,
                        max_num_tokens=K if g.policy != "cadence" else None, **kw)


def evaluate_task(task: Task) -> tuple[dict, list[str]]:
    """Every configuration of the task's groups in closed form: the per-row columns (NumPy) and notes.

    What is the same for a whole layout (names, chips, split, memory) is filled in by `_layout_columns`
    in the caller, from the group's id: a task sends back numbers only.
    """
    t = task.target
    cols: dict[str, list] = {}
    notes: list[str] = []
    price = t.system.usd_per_chip_hour
    for j, g in enumerate(task.groups):
        U = np.repeat(np.asarray(g.concurrency, dtype=float) * g.pp, len(g.budgets))
        K = np.tile(np.asarray(g.budgets, dtype=float), len(g.concurrency))
        try:
            ss = _steady(t, g, U, K, task.isl, task.osl)
        except InputError as e:
            notes.append(f"{t.label}, {g.name}: left out ({e})")
            continue
        n = U.size
        col = lambda k: np.broadcast_to(np.asarray(ss[k], dtype=float), (n,)) if k in ss.numbers \
            else np.full(n, np.nan)  # noqa: E731
        out_tps = col("output_tokens_per_s") * g.pp
        row = {
            "group_id": np.full(n, task.first_group + j), "concurrency": U,
            "max_num_tokens": K if g.policy != "cadence" else np.full(n, np.nan),
            "batch": col("batch") * g.pp, "prefill_batch": col("prefill_batch"),
            "decode_step_s": col("decode_step_s"), "prefill_step_s": col("prefill_step_s"),
            "output_tokens_per_s": out_tps, "tokens_per_s_per_chip": col("tokens_per_s_per_chip"),
            "tokens_per_s_per_user": col("tokens_per_s_per_user"), "ttft_s": col("ttft_s"), "tpot_s": col("tpot_s"),
            "e2e_s": col("e2e_s"), "requests_per_s": col("requests_per_s") * g.pp,
            "deployment_tokens_per_s": out_tps * g.replicas,
            "usd_per_mtok": usd_per_mtok(g.chips, price, 1.0, out_tps) if price else np.full(n, np.nan),
        }
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    return {k: np.concatenate(v) for k, v in cols.items()}, notes


def _layout_columns(spaces: list[Space], group_id: np.ndarray, isl: float, osl: float) -> dict:
    """The columns that are the same for every configuration of a layout, one row per configuration."""
    per: dict[str, list] = {k: [] for k in ("model", "system", "chip", "precision", "kv_dtype", "policy", "layout",
                                            "chips", "tp", "ep", "pp", "stage_chips", "prefill_chips",
                                            "decode_chips", "replicas", "deployment_chips", "weights_per_chip_bytes",
                                            "batch_cap", "usd_per_chip_hour")}
    for sp in spaces:
        t = sp.target
        for g in sp.groups:
            disagg = g.policy == "disagg"
            for k, v in (("model", t.model.name), ("system", t.system.name), ("chip", t.system.chip.name),
                         ("precision", t.precision), ("kv_dtype", t.kv_dtype), ("policy", g.policy),
                         ("layout", g.name), ("chips", g.chips), ("tp", g.tp), ("ep", g.ep), ("pp", g.pp),
                         ("stage_chips", g.stage_chips), ("prefill_chips", g.prefill_chips if disagg else np.nan),
                         ("decode_chips", g.decode_chips if disagg else np.nan), ("replicas", g.replicas),
                         ("deployment_chips", g.replicas * g.chips), ("weights_per_chip_bytes", g.weights_per_chip_bytes),
                         ("batch_cap", g.batch_cap), ("usd_per_chip_hour", t.system.usd_per_chip_hour or np.nan)):
                per[k].append(v)
    out = {k: np.asarray(v)[group_id] for k, v in per.items()}
    out.update(isl=np.full(group_id.size, isl), osl=np.full(group_id.size, osl))
    return out


def confirm_task(c: Confirmation) -> dict:
    """One candidate through the simulator: a closed loop at its concurrency (a pipeline: one stage-equivalent)."""
    t, g = c.target, c.group
    u = c.concurrency // g.pp
    kw = dict(requests=c.requests, policy=g.policy, spec=t.spec, precision=t.precision, kv_dtype=t.kv_dtype,
              priors=t.priors, engine=t.engine, slo_ttft=c.slo_ttft, slo_tpot=c.slo_tpot, seed=c.seed)
    if c.workload is not None:  # the trace's rows in order, over again until there are enough requests
        rows = np.arange(c.requests) % c.workload.isl.size
        kw["workload"] = Workload(c.workload.isl[rows], c.workload.osl[rows], None, u, c.workload.source)
    else:
        kw.update(concurrency=u, isl=c.isl, osl=c.osl)
    if g.policy != "cadence":
        kw["max_num_tokens"] = int(c.budget)
    if g.policy == "disagg":
        r = simulate(t.model, t.system, G=g.decode_chips, prefill_chips=g.prefill_chips, decode_chips=g.decode_chips,
                     max_batch=g.batch_cap, **kw)
    else:
        r = simulate(t.model, pipeline_system(t.system, g.pp), G=g.stage_chips, layout=g.layout,
                     max_batch=g.batch_cap // g.pp, **kw)
    # each client's first request starts with all the others at t = 0: a cold start, left out of the verdict
    warm = min(u, len(r.ttft_s) // 2)
    ttft, tpot = stats(r.ttft_s[warm:]), stats(r.tpot_s[warm:])
    ok = (c.slo_ttft is None or ttft["mean"] <= c.slo_ttft) and \
        (c.slo_tpot is None or not tpot or tpot["mean"] <= c.slo_tpot)
    return {"sim_requests": r["requests_completed"], "sim_ttft_s": ttft["mean"], "sim_ttft_p90_s": ttft["p90"],
            "sim_ttft_p95_s": ttft["p95"], "sim_ttft_p99_s": ttft["p99"], "sim_tpot_s": tpot.get("mean", np.nan),
            "sim_tpot_p90_s": tpot.get("p90", np.nan), "sim_tpot_p95_s": tpot.get("p95", np.nan),
            "sim_tokens_per_s_per_chip": r["tokens_per_s_per_chip"],
            "sim_tokens_per_s_per_user": float(np.nanmean(1.0 / r.tpot_s[warm:])) if tpot else np.nan,
            "sim_meets_slo": float(ok)}


@dataclass
class SearchResult:
    """Every evaluated configuration (columns), the best per (model, system), and a summary."""

    spec: SearchSpec
    columns: dict
    best: list[int]  # row indices, one per (model, system) that has one
    summary: dict
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.columns["config_id"])

    def row(self, i: int) -> dict:
        """One configuration as plain values; a column that does not apply to it (null) is left out."""
        out = {}
        for k, (kind, _) in COLUMNS.items():
            v = self.columns[k][i]
            if v is None or (isinstance(v, float) and np.isnan(v)):
                continue
            out[k] = str(v) if kind == "str" else bool(v) if kind == "bool" else int(v) if kind == "int" else float(v)
        return out

    def intervals(self, i: int) -> dict:
        """A configuration's 80 % intervals (`<column>_interval`, `interval_groups`); {} on a calibrated profile."""
        row = self.row(i)
        system = next(t.system for t in self.spec.targets if t.system.name == row["system"])
        return row_intervals(row, load_priors(system.chip.priors), row["precision"])

    def to_dict(self) -> dict:
        return {"best": [self.row(i) | self.intervals(i) for i in self.best], "summary": self.summary,
                **({"notes": self.notes} if self.notes else {})}


def _check(spec: SearchSpec) -> None:
    if not spec.targets:
        raise InputError("nothing to search: give at least one model and one system")
    if spec.objective not in OBJECTIVES:
        raise InputError(f"--objective must be one of {', '.join(OBJECTIVES)} (got {spec.objective!r})")
    bad = [p for p in spec.policies if p not in POLICIES]
    if bad or not spec.policies:
        raise InputError(f"--policy must name some of {', '.join(POLICIES)} (the policies with a closed form; got "
                         f"{', '.join(bad) or 'none'})")
    if not spec.isl >= 1 or not spec.osl >= 2:
        raise InputError(f"the search needs ISL ≥ 1 and OSL ≥ 2 tokens (per-user speed is 1 / TPOT; got {spec.isl:g}, "
                         f"{spec.osl:g})")
    for x, name in ((spec.slo_ttft, "--slo-ttft"), (spec.slo_tpot, "--slo-tpot")):
        if x is not None and (not np.isfinite(x) or x <= 0):
            raise InputError(f"{name} must be a positive time (got {x})")
    if spec.max_chips is not None and not 1 <= spec.max_chips <= 1_000_000:
        raise InputError(f"--max-chips must be from 1 to a million (got {spec.max_chips})")
    if not spec.budgets or any(not np.isfinite(b) or b < 1 for b in spec.budgets):
        raise InputError("--max-num-tokens values must be whole numbers of tokens ≥ 1")
    if not 1 <= spec.confirm <= 1000:
        raise InputError(f"--confirm must be from 1 to 1,000 candidates per model and system (got {spec.confirm})")
    if not 1 <= spec.rounds <= 20:
        raise InputError(f"--rounds must be from 1 to 20 (got {spec.rounds})")


def plan(spec: SearchSpec) -> tuple[list[Space], list[Task]]:
    """The search space of every target and the tasks that evaluate it, in a fixed order."""
    _check(spec)
    spaces, tasks, first = [], [], 0
    for t in spec.targets:
        sp = enumerate_groups(t, isl=spec.isl, osl=spec.osl, engine=load_engine(t.engine), policies=spec.policies,
                              max_chips=spec.max_chips, budgets=spec.budgets)
        spaces.append(sp)
        for i in range(0, len(sp.groups), GROUPS_PER_TASK):
            tasks.append(Task(t, tuple(sp.groups[i:i + GROUPS_PER_TASK]), first + i, spec.isl, spec.osl))
        first += len(sp.groups)
    return spaces, tasks


def _rank_key(c: dict, i: int, objective: str):
    """Best first: the objective, then fewer chips, lower concurrency, the plan's order."""
    obj = c["usd_per_mtok"][i] if objective == "cost" else -c["tokens_per_s_per_chip"][i]
    return (np.inf if np.isnan(obj) else obj, c["chips"][i], c["concurrency"][i], i)


def search(spec: SearchSpec, runner=None, progress: Callable[[int], None] | None = None) -> SearchResult:
    """Enumerate, evaluate in closed form, confirm the best few per (model, system) by simulation."""
    from .search_runners import LocalRunner

    runner = runner or LocalRunner(1)
    wall0 = time.perf_counter()
    spaces, tasks = plan(spec)
    groups = [g for sp in spaces for g in sp.groups]
    if not groups:
        raise InputError("no layout fits: " + "; ".join(f"{sp.target.label}: {sp.pruned} layouts pruned"
                                                           for sp in spaces) + " (more --max-chips?)")
    size = lambda task: sum(g.size for g in task.groups)  # noqa: E731
    done = runner.map(evaluate_task, tasks, on_done=(lambda i: progress(size(tasks[i]))) if progress else None)
    notes = [n for sp in spaces for n in sp.notes] + [n for _, ns in done for n in ns]
    parts = [c for c, _ in done if c]
    if not parts:
        raise InputError("no configuration could be evaluated: " + "; ".join(notes[:3]))
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    cols.update(_layout_columns(spaces, cols["group_id"], spec.isl, spec.osl))
    n = len(cols["group_id"])
    cols["config_id"] = np.arange(n)
    t_eval = time.perf_counter() - wall0

    ok_ttft = np.ones(n, bool) if spec.slo_ttft is None else cols["ttft_s"] <= spec.slo_ttft
    ok_tpot = np.ones(n, bool) if spec.slo_tpot is None else cols["tpot_s"] <= spec.slo_tpot
    cols.update(slo_ttft_s=np.full(n, np.nan if spec.slo_ttft is None else spec.slo_ttft),
                slo_tpot_s=np.full(n, np.nan if spec.slo_tpot is None else spec.slo_tpot),
                meets_ttft=ok_ttft, meets_tpot=ok_tpot, meets_slo=ok_ttft & ok_tpot)
    pairs = list(dict.fromkeys(zip(cols["model"].tolist(), cols["system"].tolist())))
    if not cols["meets_slo"].any():
        raise InputError(_impossible(cols, spec))

    for k in _SIM_KEYS:
        cols[k] = np.full(n, np.nan)
    cols["confirmed"] = np.zeros(n, bool)
    best, unmet = _confirm(spec, cols, pairs, groups, runner)
    cols["best"] = np.zeros(n, bool)
    cols["best"][best] = True
    t_all = time.perf_counter() - wall0
    summary = {
        "models": len({m for m, _ in pairs}), "systems": len({s for _, s in pairs}), "targets": len(spec.targets),
        "layouts": len(groups), "layouts_pruned": sum(sp.pruned for sp in spaces), "configurations": n,
        "meeting_slo": int(cols["meets_slo"].sum()), "confirmed": int(cols["confirmed"].sum()),
        "tasks": len(tasks), "runner": runner.describe(), "objective": spec.objective,
        "engine": spec.targets[0].engine,
        "evaluate_s": t_eval, "seconds": t_all, "configurations_per_s": n / max(t_eval, 1e-9),
        "best_per_model": _best_per_model(cols, best, spec.objective),
    }
    if spec.slo_ttft is not None:
        summary["slo_ttft_s"] = spec.slo_ttft
    if spec.slo_tpot is not None:
        summary["slo_tpot_s"] = spec.slo_tpot
    if unmet:
        summary["unmet"] = unmet
    return SearchResult(spec, {k: cols[k] for k in COLUMNS}, best, summary, notes)


def _candidates(spec: SearchSpec, cols: dict, p: tuple, headroom: float) -> list[int]:
    """Each layout's best operating point within headroom · SLO in closed form, best layout first."""
    ok = (cols["model"] == p[0]) & (cols["system"] == p[1]) & cols["meets_slo"]
    if spec.slo_ttft is not None:
        ok &= cols["ttft_s"] <= headroom * spec.slo_ttft
    if spec.slo_tpot is not None:
        ok &= cols["tpot_s"] <= headroom * spec.slo_tpot
    seen, firsts = set(), []
    for i in sorted(np.flatnonzero(ok).tolist(), key=lambda i: _rank_key(cols, i, spec.objective)):
        if cols["group_id"][i] not in seen:
            seen.add(cols["group_id"][i])
            firsts.append(i)
    return firsts


def _confirm(spec: SearchSpec, cols: dict, pairs, groups: list[Group], runner) -> tuple[list[int], list[dict]]:
    """Simulate the best few layouts per (model, system), in rounds, until one meets the SLOs there too.

    Round r asks the closed form for headroom HEADROOM^r under the SLOs: where the simulator finds the
    closed form optimistic (lengths that vary, disagg's TTFT), the next round backs off.
    """
    targets = {(t.model.name, t.system.name, t.precision): t for t in spec.targets}
    best: dict[tuple, int] = {}
    for rnd in range(spec.rounds):
        todo = [(p, i) for p in pairs if p not in best
                for i in [i for i in _candidates(spec, cols, p, HEADROOM ** rnd) if not cols["confirmed"][i]]
                [:spec.confirm]]
        if not todo:
            break
        jobs = [Confirmation(targets[(cols["model"][i], cols["system"][i], cols["precision"][i])],
                             groups[int(cols["group_id"][i])], int(cols["concurrency"][i]),
                             float(np.nan_to_num(cols["max_num_tokens"][i], nan=0.0)), spec.isl, spec.osl,
                             _requests(spec, int(cols["concurrency"][i] // cols["pp"][i])), spec.workload,
                             spec.slo_ttft, spec.slo_tpot, spec.seed) for _, i in todo]
        for (p, i), r in zip(todo, runner.map(confirm_task, jobs)):
            cols["confirmed"][i] = True
            for k, v in r.items():
                cols[k][i] = v
        for p in pairs:
            if p in best:
                continue
            ok = [i for q, i in todo if q == p and cols["sim_meets_slo"][i] == 1.0]
            if ok:
                best[p] = min(ok, key=lambda i: (-cols["sim_tokens_per_s_per_chip"][i],) + _rank_key(cols, i,
                                                                                                      spec.objective))
    unmet = []
    for p in pairs:
        if p not in best:
            tried = int(np.sum(cols["confirmed"] & (cols["model"] == p[0]) & (cols["system"] == p[1])))
            unmet.append({"model": p[0], "system": p[1], "why": (
                f"none of the {tried} simulated candidates met the SLOs when simulated (the closed form is optimistic "
                "for lengths that vary and for disagg's TTFT; more --rounds, or looser SLOs)" if tried
                else "no configuration meets the SLOs in closed form")})
    return [best[p] for p in pairs if p in best], unmet


def _requests(spec: SearchSpec, u: int) -> int:
    return int(spec.requests or min(4000, max(400, 10 * u)))


def _best_per_model(cols: dict, best: list[int], objective: str) -> list[dict]:
    out = []
    for m in dict.fromkeys(cols["model"][best].tolist()):
        rows = [i for i in best if cols["model"][i] == m and not (objective == "cost" and np.isnan(cols["usd_per_mtok"][i]))]
        if rows:
            i = min(rows, key=lambda i: (cols["usd_per_mtok"][i] if objective == "cost" else
                                         -cols["sim_tokens_per_s_per_chip"][i], i))
            out.append({"model": m, "system": str(cols["system"][i]), "layout": str(cols["layout"][i]),
                        "config_id": int(i), "sim_tokens_per_s_per_chip": float(cols["sim_tokens_per_s_per_chip"][i]),
                        **({"usd_per_mtok": float(cols["usd_per_mtok"][i])}
                           if not np.isnan(cols["usd_per_mtok"][i]) else {})})
    return out


def _impossible(cols: dict, spec: SearchSpec) -> str:
    from ..core.units import fmt

    want = " and ".join(([f"TTFT ≤ {fmt(spec.slo_ttft, 's')}"] if spec.slo_ttft is not None else []) +
                        ([f"TPOT ≤ {fmt(spec.slo_tpot, 's')}"] if spec.slo_tpot is not None else []))
    found = []
    if spec.slo_ttft is not None:
        found.append(f"the lowest TTFT found is {fmt(float(np.nanmin(cols['ttft_s'])), 's')}")
    if spec.slo_tpot is not None:
        found.append(f"the lowest TPOT {fmt(float(np.nanmin(cols['tpot_s'])), 's')}")
    return f"no configuration of the {len(cols['ttft_s']):,} evaluated meets {want}: {', '.join(found)}"


def derivation(result: SearchResult, i: int):
    """The closed form of row i with its derivation (`--explain`)."""
    c = result.columns
    t = next(t for t in result.spec.targets if (t.model.name, t.system.name, t.precision) ==
             (c["model"][i], c["system"][i], c["precision"][i]))
    spaces, _ = plan(result.spec)
    g = [g for sp in spaces for g in sp.groups][int(c["group_id"][i])]
    K = None if np.isnan(c["max_num_tokens"][i]) else float(c["max_num_tokens"][i])
    return _steady(t, g, float(c["concurrency"][i]), K, result.spec.isl, result.spec.osl, explain=True)
