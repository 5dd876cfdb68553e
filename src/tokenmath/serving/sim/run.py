"""One simulated run: the requests issued (closed or open loop), the policy's replica(s), and the summary.

The KV pool of a replica of G chips is what the engine leaves for KV beside the weights, its activation
workspace and runtime, by the engine's own rule (serving/engine_memory.py; catalog/engines/<engine>.yaml):

    kv_pool = f_kv · (G · C − W_all)        (the default engine; C: HBM per chip)

and a request is admitted only while its KV charge fits: its whole KV (prompt plus output, plus the draft's) where
the engine reserves it (TensorRT-LLM's guaranteed-no-evict), its mean hold in a full pool where the engine allocates as
tokens come (vLLM, SGLang: fastpath.held_tokens, the engine's kv_output_reserve).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ...core import arch
from ...core.derive import value_of
from ...core.errors import InputError
from ...core.load import load_engine, load_priors
from ...core.records import Model, Priors, System, kernel_engine
from ...core.roofline import Layout, default_layout, step
from ..batching import worst_latency
from ..disagg import kv_link, kv_transfer_time
from ..serve import check_inputs, interval_ends, interval_phase, interval_scale
from ..speculative import Speculation
from .engine import Engine
from ..engine_memory import kv_pool_engine
from .fastpath import cadence_period, held_kv_bytes, steady_state
from .metrics import SATURATED, Recorder, SimResult, queue_growth, stats
from .policies import POLICIES, Cadence, Chunked, Continuous, Disagg
from .steps import StepTimes
from .workload import Workload, closed_loop, poisson, read_trace, with_prefix_hits

__all__ = ["simulate", "mean_intervals"]


class _Run:
    """The clock, the requests and the recorder; issues requests (closed or open loop) and retires them."""

    def __init__(self, wl: Workload, rec: Recorder):
        self.engine, self.wl, self.rec = Engine(), wl, rec
        self.issued = 0
        self.policy = None
        self.client_after_step = False
        self.pending = 0  # closed-loop requests on their way
        self.arrived = 0  # open loop: arrivals so far (those past a cap wait, unissued)
        self.waiting = 0
        self.finished = 0

    def start(self) -> None:
        if self.wl.arrival_s is None:
            for _ in range(min(self.wl.concurrency, self.wl.n)):
                self._issue()
        else:
            self.engine.at(float(self.wl.arrival_s[0]), self._arrival)

    def _issue(self) -> None:
        r = self.issued
        self.issued += 1
        self.rec.arrive(r, self.engine.now)
        self.policy.arrive(r)

    def _arrival(self) -> None:
        self.arrived += 1
        cap = self.wl.max_in_flight
        if cap is not None and self.issued - self.finished >= cap:
            self.waiting += 1  # sent when a request in flight finishes
        else:
            self._issue()
        if self.arrived < self.wl.n:
            self.engine.at(float(self.wl.arrival_s[self.arrived]), self._arrival)

    def done(self, r: int) -> None:
        self.rec.done(r, self.engine.now)
        self.finished += 1
        if self.waiting:
            self.waiting -= 1
            self._issue()
        if self.wl.arrival_s is None and self.issued + self.pending < self.wl.n:
            if self.client_after_step:  # the client's next request reaches a scheduler that has planned on
                self.pending += 1
                self.engine.at(self.engine.now, self._issue_pending)
            else:
                self._issue()

    def _issue_pending(self) -> None:
        self.pending -= 1
        self._issue()


def _positive(x, name):
    if x is not None and (not np.isfinite(x) or not x > 0):
        raise InputError(f"{name} must be a positive number (got {x})")


def simulate(m: Model, system: System, *, G: int | None = None, concurrency: int | None = None,
             rate: float | None = None, requests: int = 1000, isl: float | None = None, osl: float | None = None,
             workload: Workload | str | None = None, range_ratio: float = 0.0, policy: str = "continuous",
             chunk: int | None = None, max_batch: int | None = None, prefill_chips: int | None = None,
             decode_chips: int | None = None, spec: Speculation | None = None, slo_ttft: float | None = None,
             slo_tpot: float | None = None, seed: int = 0, precision: str | None = None, kv_dtype: str | None = None,
             basis: str = "prior", priors: Priors | None = None, layout: Layout | None = None,
             engine: str = "default", max_num_tokens: int | None = None, prefill_layout: Layout | None = None,
             prefill_workers: int = 1, decode_workers: int = 1, prefix_hit: float = 0.0,
             max_concurrency: int | None = None) -> SimResult:
    """Simulate `requests` requests on one replica of G chips (disagg: a prefill and a decode pool).

    `max_num_tokens` replaces the engine's token budget of a prefill step (continuous, disagg). Disagg:
    `prefill_workers` workers of `prefill_chips` each (split `prefill_layout`, default: `layout`, else the default
    layout of their chips) and `decode_workers` of `decode_chips` (split `layout`), all serving the one workload.
    `prefix_hit`: the share of every prompt a prefix cache holds (workload.with_prefix_hits; not under cadence).
    `max_concurrency`: an open loop's cap on requests in flight (an arrival past it waits, untimed, to be sent).
    """
    wall0 = time.perf_counter()
    if policy not in POLICIES:
        raise InputError(f"--policy must be one of {', '.join(POLICIES)} (got {policy!r})")
    G = system.domain_chips if G is None else G
    precision, kv_dtype = precision or m.weight_dtype, kv_dtype or m.kv_dtype
    check_inputs(G=G, precision=precision, kv_dtype=kv_dtype, basis=basis)
    for x, name in ((slo_ttft, "--slo-ttft"), (slo_tpot, "--slo-tpot"), (chunk, "--chunk"), (max_batch, "--max-batch"),
                    (max_num_tokens, "max_num_tokens")):
        _positive(x, name)
    if policy != "disagg" and (prefill_chips or decode_chips or prefill_layout or prefill_workers != 1
                               or decode_workers != 1):
        raise InputError("--prefill-chips/--decode-chips and the pools' workers apply to --policy disagg")
    for n, name in ((prefill_workers, "prefill workers"), (decode_workers, "decode workers")):
        if int(n) != n or n < 1:
            raise InputError(f"{name} must be a whole number ≥ 1 (got {n})")
    eng = load_engine(engine)
    pri = (priors or load_priors(system.chip.priors)).for_engine(kernel_engine(engine))
    wl = _workload(workload, concurrency, rate, requests, isl, osl, range_ratio, seed)
    if max_concurrency is not None:
        if wl.arrival_s is None:
            raise InputError("--max-concurrency caps an open loop (--rate or a trace's arrivals); a closed loop's "
                             f"--concurrency ({wl.concurrency}) already is its number in flight")
        if not max_concurrency >= 1 or int(max_concurrency) != max_concurrency:
            raise InputError("--max-concurrency caps an open loop (--rate or a trace's arrivals) at a whole number "
                             f"≥ 1 of requests in flight (got {max_concurrency})")
        wl = dataclasses.replace(wl, max_in_flight=int(max_concurrency))
    if prefix_hit:
        if policy == "cadence":
            raise InputError("a prefix cache is not modelled under the cadence policy (its train prices whole prompts)")
        wl = with_prefix_hits(wl, prefix_hit)

    G_p, G_d = (int(prefill_chips or G), int(decode_chips or G)) if policy == "disagg" else (G, G)
    check_inputs(G=G_p)
    check_inputs(G=G_d)
    lay = layout or default_layout(m, G_d)
    W_all = float(value_of(arch.model_weight_bytes(m, precision))) + (spec.extra_weight_bytes(m, precision) if spec else 0.0)
    pool = float(kv_pool_engine(eng, m, system, G_d, W_all, tp=float(lay.tp), precision=precision, pp=lay.pp))
    # a request must fit whole (its last token needs all of it); the replica admits against its mean hold (r < 1:
    # vLLM, SGLang allocate as tokens come) or its whole KV (r = 1: TensorRT-LLM's guaranteed-no-evict); its
    # preemptions (recompute) are not simulated
    _check_memory(m, system, G_d, W_all, pool, held_kv_bytes(m, wl.isl, wl.osl, 1.0, kv_dtype, spec), wl)
    need = held_kv_bytes(m, wl.isl, wl.osl, float(eng["kv_output_reserve"]), kv_dtype, spec)
    if policy == "disagg" and W_all > G_p * system.chip.hbm_capacity_bytes:
        raise InputError(f"{m.name} does not fit on {G_p} prefill chips: use more --prefill-chips")
    # the engine's max_batch is each attention-DP rank's scheduler's (TensorRT-LLM's max_batch_size, vLLM's max_num_seqs
    # per DP engine), as its token budget below; a --max-batch given is the replica's
    cap = float(max_batch or float(eng["max_batch"]) * lay.dp(G_d))
    if wl.concurrency or wl.max_in_flight:
        cap = min(cap, wl.concurrency or wl.max_in_flight)
    B_max = max(1.0, min(cap, np.floor(pool / need.min())))
    budget = float(chunk or _engine_tokens(eng, system, "chunk_tokens")) if policy == "chunked" else \
        float(max_num_tokens or _engine_tokens(eng, system, "max_num_tokens"))
    pre_lay = prefill_layout or layout or default_layout(m, G_p)
    # attention data parallelism: each rank's scheduler fills its own token budget (disagg: the prefill worker's ranks)
    budget *= pre_lay.dp(G_p) if policy == "disagg" else lay.dp(G_d)
    n_pre = max(1.0, min(B_max, np.floor(budget / wl.new_isl.min())))
    S_max = float((wl.isl + wl.osl).max()) + 1
    kw = dict(precision=precision, kv_dtype=kv_dtype, basis=basis, priors=pri, spec=spec, S_max=S_max)

    rec = Recorder(wl.n)
    run = _Run(wl, rec)
    dec = StepTimes(m, system, G=G_d, layout=lay, B_max=B_max, n_prefill_max=n_pre, **kw)
    notes: list[str] = []
    settings = {"policy": policy, "engine": engine, "split": lay.words(G_d),
                "chips": G_p + G_d if policy == "disagg" else G,
                **_batch_limit(np.floor(pool / need.min()), float(max_batch or float(eng["max_batch"]) * lay.dp(G_d)),
                               wl.concurrency or wl.max_in_flight, int(decode_workers) if policy == "disagg" else 1)}
    ahead = eng.get("schedule_ahead")
    sched = dict(ahead=None if ahead is None else int(ahead))
    run.client_after_step = ahead is not None
    if policy == "continuous":
        run.policy = Continuous(run, dec, pool, need, cap, budget, **sched)
    elif policy == "chunked":
        run.policy = Chunked(run, dec, pool, need, cap, budget, **sched)
        settings["chunk_tokens"] = budget
    elif policy == "cadence":
        seats = B_max
        period = float(cadence_period(m, system, spec, seats=seats, I=float(wl.isl.mean()), O=float(wl.osl.mean()),
                                      G=G, layout=lay, precision=precision, kv_dtype=kv_dtype, basis=basis, priors=pri))
        run.policy = Cadence(run, dec, pool, need, seats, period)
        settings.update(seats=seats, step_s=period, worst_wait_s=float(worst_latency(period)))
    else:
        pre = StepTimes(m, system, G=G_p, layout=pre_lay, B_max=1, n_prefill_max=n_pre, **kw)
        xfer_bytes = np.asarray(arch.kv_stored_bytes(m, wl.isl, kv_dtype), dtype=float)
        bw, lat, crosses, _ = kv_link(system, pri, G_p, G_d)
        xfer = kv_transfer_time(xfer_bytes, min(G_p, G_d), bw, lat)
        run.policy = Disagg(run, pre, dec, pool, need, cap, budget, xfer, int(prefill_workers), int(decode_workers))
        settings.update(prefill_chips=G_p, decode_chips=G_d, kv_transfer_s_mean=float(np.mean(xfer)),
                        link="scale-out" if crosses else "scale-up")
        if prefill_workers > 1 or decode_workers > 1:
            settings.update(chips=int(prefill_workers) * G_p + int(decode_workers) * G_d,
                            prefill_workers=int(prefill_workers), decode_workers=int(decode_workers))
    run.start()
    run.engine.run()
    if np.isnan(rec.done_at).any():
        raise InputError("the run stalled: some requests never finished (a request that can never be admitted?)")

    result = _summarise(m, system, wl, rec, run, settings, pool, slo_ttft, slo_tpot, spec, precision, kv_dtype, basis,
                        time.perf_counter() - wall0, dec.calls, notes)
    if basis == "prior" and pri.formats is None:
        result.metrics.update(mean_intervals(result.metrics, pri, precision))
    fixed = wl.isl.min() == wl.isl.max() and wl.osl.min() == wl.osl.max() and wl.osl[0] >= 2 and wl.cached is None
    one_each = prefill_workers == 1 and decode_workers == 1 and prefill_layout is None  # the closed form's disagg
    if wl.arrival_s is None and policy in ("continuous", "disagg", "cadence") and fixed and one_each:
        result.analytic = steady_state(m, system, G=G, concurrency=wl.concurrency, isl=float(wl.isl.mean()),
                                       osl=float(wl.osl.mean()), policy=policy, max_batch=max_batch,
                                       prefill_chips=prefill_chips, decode_chips=decode_chips, spec=spec,
                                       precision=precision, kv_dtype=kv_dtype, basis=basis, priors=pri,
                                       layout=layout, engine=engine, max_num_tokens=max_num_tokens, explain=True)
    elif spec is None and result.metrics["mean_batch"] >= 1:  # no closed form: the step the TPOT is made of
        B_bar, S_bar = float(result.metrics["mean_batch"]), float(wl.isl.mean() + wl.osl.mean() / 2)
        result.decode_step = (B_bar, S_bar, step(m, system, B=B_bar, S=S_bar, phase="decode", explain=True,
                                                 **dec.kw).t_step)
    return result


def _batch_limit(pool_seats: float, engine_cap: float, clients: int | None, workers: int) -> dict:
    """The most sequences decoding at once over the deployment's decoding replicas (`workers` of them: disagg's decode
    workers), and what sets it — beyond it requests queue, and their wait is TTFT. Ties go to the clients, then the
    engine's cap."""
    limits = {"the concurrency": clients} if clients else {}
    limits.update({"the engine's batch cap": engine_cap * workers, "the KV pool": max(1.0, pool_seats) * workers})
    by = min(limits, key=lambda k: (limits[k], list(limits).index(k)))
    return {"batch_limit": int(limits[by]), "batch_limit_by": by}


def _engine_tokens(eng: dict, system: System, key: str) -> float:
    """An engine's token budget per step; engines that scale it with the GPU's memory (SGLang: 16,384 from
    160 GB) give `<key>_large_gpu`."""
    big = eng.get("max_num_tokens_large_gpu")
    if big and system.chip.hbm_capacity_bytes >= 160e9:
        return float(big)
    return float(eng[key])


def _workload(workload, concurrency, rate, requests, isl, osl, range_ratio, seed) -> Workload:
    if concurrency is not None and rate is not None:
        raise InputError("give --concurrency or --rate, not both")
    if rate is not None and (not np.isfinite(rate) or rate <= 0):
        raise InputError(f"--rate must be a positive number of requests per second (got {rate})")
    if isinstance(workload, Workload):
        return workload
    if workload is not None:
        if isl is not None or osl is not None:
            raise InputError("give --isl/--osl or --workload FILE, not both")
        wl = read_trace(workload, concurrency, requests if requests else None)
        if rate is not None:
            raise InputError("a trace with arrival times sets its own rate: drop --rate (or give --concurrency)")
        return wl
    if isl is None or osl is None:
        raise InputError("give --isl and --osl (tokens per prompt and per output), or --workload FILE")
    if concurrency is None and rate is None:
        raise InputError("give --concurrency C (closed loop) or --rate R (Poisson arrivals per second)")
    if concurrency is not None:
        return closed_loop(concurrency, requests, isl, osl, range_ratio, seed)
    return poisson(rate, requests, isl, osl, range_ratio, seed)


def _check_memory(m, system, G, W_all, pool, need, wl) -> None:
    cap = G * system.chip.hbm_capacity_bytes
    if pool <= 0:
        raise InputError(f"{m.name} does not fit on {G} × {system.chip.name}: weights {W_all / 1e9:.0f} GB of "
                         f"{cap / 1e9:.0f} GB HBM leave no room for KV; use more --chips or a narrower --precision")
    worst = int(np.argmax(need))
    if need[worst] > pool:
        raise InputError(f"one request of {int(wl.isl[worst])} + {int(wl.osl[worst])} tokens needs "
                         f"{need[worst] / 1e9:.3g} GB of KV but the pool beside the weights holds {pool / 1e9:.3g} GB "
                         f"on {G} × {system.chip.name}; use more --chips or shorter requests")


_MEANS = ("ttft_s", "tpot_s", "itl_s", "e2e_s", "tokens_per_s_per_user", "output_tokens_per_s", "tokens_per_s_per_chip",
          "requests_per_s")


def mean_intervals(metrics: dict, pri: Priors, precision: str) -> dict:
    """80 % intervals of the run's means (`<metric>_interval`; rates [x·down, x·up], times [t/up, t/down]) and of its
    percentiles (`<metric>.p99_interval`, the same factors: validate keys a p99 row to its phase's group as it does a
    mean) from the validation residuals of rows under load of the same generation × phase × precision
    (serve.interval_scale); `interval_groups` names each group. None where the catalog holds no interval table."""
    out: dict = {}
    groups: dict = {}
    for key in _MEANS:
        v, phase = metrics.get(key), interval_phase(key)
        x = v.get("mean") if isinstance(v, dict) else v
        scale = interval_scale(pri, phase, precision) if x is not None else None
        if scale is None:
            continue
        groups[phase] = scale[2]
        rate = "_per_s" in key  # a rate's name says per second; every other mean is a time
        ends = lambda y: interval_ends(y, scale, rate)  # noqa: E731
        out[f"{key}_interval"] = ends(x)
        if isinstance(v, dict):
            out[key] = {**v, **{f"{p}_interval": ends(y) for p, y in v.items()
                                if p.startswith("p") and isinstance(y, float) and np.isfinite(y)}}
    if groups:
        out["interval_groups"] = groups
    return out


def _summarise(m, system, wl, rec, run, settings, pool, slo_ttft, slo_tpot, spec, precision, kv_dtype, basis, wall,
               calls, notes) -> SimResult:
    t0 = float(np.nanmin(rec.arrival_at))
    t_end = float(np.nanmax(rec.done_at))
    D = max(t_end - t0, 1e-30)
    ttft = rec.first_at - rec.arrival_at
    e2e = rec.done_at - rec.arrival_at
    multi = wl.osl > 1
    tpot = np.full(wl.n, np.nan)
    tpot[multi] = (rec.done_at[multi] - rec.first_at[multi]) / (wl.osl[multi] - 1)
    speed = 1.0 / tpot
    inflight_int, kv_int = rec.close(t_end)
    chips = settings["chips"]
    out_tps = float(wl.osl.sum()) / D
    metrics: dict = {
        "ttft_s": stats(ttft), "tpot_s": stats(tpot), "itl_s": rec.itl_stats(), "e2e_s": stats(e2e),
        "output_tokens_per_s": out_tps, "tokens_per_s_per_chip": out_tps / chips,
        "tokens_per_s_per_user": {k: v for k, v in stats(speed).items() if k in ("mean", "p50")},
        "requests_completed": int(np.isfinite(rec.done_at).sum()), "requests_per_s": wl.n / D,
        "duration_s": D, "in_flight_mean": inflight_int / D,
        "mean_batch": rec.batch_sum / rec.steps if rec.steps else 0.0,
        "kv_utilisation": kv_int / (D * pool), "kv_pool_bytes": pool,
        "decode_steps": rec.steps, "prefill_steps": rec.prefill_steps,
    }
    metrics = {k: v for k, v in metrics.items() if v != {}}  # no decode token (OSL 1): no TPOT/ITL, omitted
    if slo_ttft is not None or slo_tpot is not None:
        ok = np.ones(wl.n, dtype=bool)
        if slo_ttft is not None:
            ok &= ttft <= slo_ttft
        if slo_tpot is not None:
            ok &= ~(tpot > slo_tpot)  # single-token requests have no TPOT: they meet any TPOT SLO
        metrics["goodput"] = float(ok.sum()) / D
        metrics["slo_attainment"] = float(ok.mean())
    settings = {"model": m.name, "system": system.name, "chip": system.chip.name, **settings,
                "requests": wl.n, "workload": wl.describe(), "isl_mean": float(wl.isl.mean()),
                "osl_mean": float(wl.osl.mean()), "precision": precision, "kv_dtype": kv_dtype, "basis": basis}
    if wl.concurrency is not None:
        settings["concurrency"] = wl.concurrency
    else:
        settings["rate_per_s"] = wl.n / max(float(wl.arrival_s[-1]), 1e-30) if wl.n > 1 else None
        settings["max_concurrency"] = wl.max_in_flight
        growth = queue_growth(wl.arrival_s, rec.first_at)
        metrics["queue_growth"] = growth
        settings["saturated"] = growth > SATURATED
        if settings["saturated"]:
            notes.append(f"saturated: the offered {settings['rate_per_s']:.3g} requests/s exceed the "
                         f"~{metrics['requests_per_s']:.3g} served, so the queue grows through the run (each request "
                         f"waits {growth:.2g} s longer for its first token per second later it arrives"
                         + (", before it is sent" if wl.max_in_flight else "") + "); the means are no steady state "
                         "and grow with --requests: lower --rate")
    if spec:
        settings["speculation"] = {"draft_tokens": spec.K, "acceptance": spec.alpha, "draft": spec.kind,
                                   "tokens_per_step": spec.tokens_per_step}
    if slo_ttft is not None:
        settings["slo_ttft_s"] = slo_ttft
    if slo_tpot is not None:
        settings["slo_tpot_s"] = slo_tpot
    settings = {k: v for k, v in settings.items() if v is not None}
    order = np.argsort(rec.series_t, kind="stable")
    return SimResult(settings, metrics, ttft, tpot, np.asarray(rec.series_t)[order], np.asarray(rec.series_B)[order],
                     run.engine.events, rec.steps + rec.prefill_steps, wall, notes=notes)
