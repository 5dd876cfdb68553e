"""Step times for the simulator: `roofline.step`, tabulated once per run and read by interpolation.

The simulator asks for tens of thousands of step times; one `roofline.step` call costs ~0.2 ms but
a call on a (batch × context) grid of 10⁵ points costs about as much as ten. So each replica
tabulates, in one vectorised call per phase:

    decode(B, S)   one decode step of B sequences at mean context S (with speculation:
                   t_verify(B, S, K + 1) + K · t_draft(B, S), see serving/speculative.py)
    prefill(n, S)  one step that prefills n prompts of S tokens

on every whole batch up to 128 and a 3 % geometric grid above, and a geometric context grid (400
points from 1 token to the longest request), then interpolates linearly between grid points. A
decode step of sequences at different contexts is read at their mean: the KV reads and attention
FLOP of full attention are linear in S, so the mean context gives their sum. Steps that mix decodes
and prompt tokens (chunked prefill, the cadence train) call `roofline.step` directly: `mixed_time`.
"""

from __future__ import annotations

import bisect

import numpy as np

from ...core.records import Model, Priors, System
from ...core.critical_path import piece_group_tokens
from ...core.roofline import Layout, default_layout, step
from ..speculative import Speculation, speculative_step

__all__ = ["StepTimes", "mixed_time", "batch_grid", "context_grid"]

MIXED_ATTN_BIN = 1.25  # a mixed step's attention share r = S_attn / S is tabulated in bins of this factor (±12 %)


def batch_grid(B_max: float) -> np.ndarray:
    B_max = max(1.0, float(B_max))
    exact = np.arange(1, min(B_max, 128) + 1, dtype=float)
    if B_max <= 128:
        return exact
    geo = np.geomspace(128, B_max, max(2, int(np.ceil(np.log(B_max / 128) / np.log(1.03))) + 1))
    return np.unique(np.concatenate([exact, np.round(geo[1:-1]), [B_max]]))


def context_grid(S_max: float) -> np.ndarray:
    return np.unique(np.concatenate([[1.0], np.geomspace(1.0, max(2.0, float(S_max)), 400)]))


class StepTimes:
    """One replica's step times (s) from roofline.step: tabulated decode and prefill, direct mixed steps."""

    def __init__(self, m: Model, system: System, *, G: int, precision: str, kv_dtype: str, basis: str,
                 priors: Priors | None, layout: Layout | None, spec: Speculation | None, B_max: float,
                 S_max: float, n_prefill_max: float = 1.0):
        self.m, self.system, self.G, self.spec = m, system, G, spec
        self.kw = dict(G=G, precision=precision, kv_dtype=kv_dtype, basis=basis, priors=priors, layout=layout)
        self.tau = spec.tokens_per_step if spec else 1.0
        self.S = context_grid(S_max)
        self.B = batch_grid(B_max)
        self._dec = None
        self.n = batch_grid(n_prefill_max)
        self._n_list = self.n.tolist()
        self._pre = None
        self._pre_memo: dict[tuple, float] = {}
        self._rows: dict[float, np.ndarray] = {}
        self._mixed: dict[tuple, np.ndarray] = {}
        self.rho = prompt_key_share(m)
        self.dp = float((layout or default_layout(m, G)).dp(G))
        self.calls = 0

    # ---- decode ------------------------------------------------------------------------------
    def decode_grid(self, B, S) -> np.ndarray:
        """Decode step time on arbitrary arrays (one roofline call); speculation included."""
        self.calls += 1
        if self.spec is None:
            return np.asarray(step(self.m, self.system, B=B, S=S, phase="decode", **self.kw).v("t_step"), dtype=float)
        return np.asarray(speculative_step(self.m, self.system, self.spec, B=B, S=S, **self.kw).v("t_spec"),
                          dtype=float)

    def _row(self, B: float) -> np.ndarray:
        r = self._rows.get(B)
        if r is None:
            if self._dec is None:
                self._dec = self.decode_grid(self.B[:, None], self.S[None, :])
            i = int(np.searchsorted(self.B, B))
            if i < len(self.B) and self.B[i] == B:
                r = self._dec[i]
            else:
                i = min(max(i, 1), len(self.B) - 1)
                w = (B - self.B[i - 1]) / (self.B[i] - self.B[i - 1])
                r = (1 - w) * self._dec[i - 1] + w * self._dec[i]
            self._rows[B] = r
        return r

    def decode(self, B: float, S) -> np.ndarray:
        """Step time of B sequences at mean context S (S may be an array: a span of steps)."""
        return np.interp(S, self.S, self._row(float(B)))

    # ---- prefill -----------------------------------------------------------------------------
    def prefill(self, n: float, S: float) -> float:
        """One step that prefills n prompts of S tokens (heterogeneous prompts: their mean length)."""
        if self._pre is None:
            self.calls += 1
            self._pre = np.asarray(step(self.m, self.system, B=self.n[:, None], S=self.S[None, :], phase="prefill",
                                        **self.kw).v("t_step"), dtype=float)
        key = (n, S)
        t = self._pre_memo.get(key)
        if t is None:
            i = min(max(bisect.bisect_left(self._n_list, n), 1), len(self._n_list) - 1) if len(self._n_list) > 1 else 0
            if len(self._n_list) == 1 or self._n_list[i] == n:
                t = float(np.interp(S, self.S, self._pre[i]))
            else:
                w = (n - self._n_list[i - 1]) / (self._n_list[i] - self._n_list[i - 1])
                t = float((1 - w) * np.interp(S, self.S, self._pre[i - 1]) + w * np.interp(S, self.S, self._pre[i]))
            self._pre_memo[key] = t
        return t

    def prompts(self, rs, wl) -> float:
        """One step that prefills the prompts of requests `rs` of workload `wl`: `prefill` at their mean length; where
        a prefix cache holds part of them, that step times the share of its work their uncached tokens carry after
        the cached ones, as a step of prompt pieces prices both (`mixed`: t_new / t_whole, so no cache is `prefill`)."""
        t = self.prefill(len(rs), float(sum(wl.isl[r] for r in rs)) / len(rs))
        if wl.cached is None:
            return t
        new = self.mixed(0, 0.0, [(float(wl.isl[r] - wl.cached[r]), float(wl.cached[r])) for r in rs])
        return t * new / self.mixed(0, 0.0, [(float(wl.isl[r]), 0.0) for r in rs])

    # ---- steps that mix decodes and prompt tokens (chunked prefill, the cadence train) ----------
    def mixed(self, n_dec: int, ctx_dec: float, chunks: list[tuple[float, float]]) -> float:
        """A step of n_dec decodes (contexts summing to ctx_dec) and prompt chunks (c tokens after `done`).

        Tabulated over the context grid once per (decodes, chunks, prompt tokens, attention share), read at the mean
        context S. The attention FLOP follow each new token's own context, S_attn = r·S: r = the token-weighted
        context over the mean one (a 2k-token chunk at its start beside 64 decodes at 3k: r ≈ 0.36), in bins of
        MIXED_ATTN_BIN.
        """
        T_pre = sum(c for c, _ in chunks)
        n = n_dec + len(chunks)
        S = (ctx_dec + sum(done + c / 2 for c, done in chunks)) / n
        per_dec = self.spec.K + 1 if self.spec else 1
        T = n_dec * per_dec + T_pre
        r = (per_dec * ctx_dec + self.rho * sum(c * (done + c / 2) for c, done in chunks)) / max(T * S, 1e-9)
        r_bin = round(float(np.log(max(r, 1e-6)) / np.log(MIXED_ATTN_BIN)))
        c_max = round(max((c for c, _ in chunks), default=0.0)) if self.dp > 1 else None  # (whole on its DP group)
        key = (n_dec, len(chunks), round(T_pre), r_bin, c_max)
        row = self._mixed.get(key)
        if row is None:  # one roofline call over the context grid per (decodes, chunks, prompt tokens, r, piece)
            self.calls += 1
            row = mixed_time(self.m, self.system, self.spec, n_dec=n_dec, ctx_dec=n_dec * self.S, n_pre=len(chunks),
                             T_pre=T_pre, ctx_pre=len(chunks) * self.S,
                             attn_ctx=MIXED_ATTN_BIN ** r_bin * (n_dec * per_dec + T_pre) * self.S,
                             c_max=c_max or None, **self.kw)
            self._mixed[key] = row
        t = float(np.interp(S, self.S, row))
        return t


def prompt_key_share(m: Model) -> float:
    """rho: a prompt token's attention FLOP per key over a decode token's, in a step priced as decode. 1 but for MLA,
    whose decodes multiply the absorbed latent (per key 2·N·(c_kv + d_rope + c_kv)) while engines prefill a prompt
    in the expanded form (2·N·(d_nope + d_rope + d_v)): DeepSeek-V3 (128 + 64 + 128) / (512 + 64 + 512) = 0.29."""
    a = m.mla
    if a is None:
        return 1.0
    return (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim) / (2 * a.kv_lora_rank + a.qk_rope_head_dim)


def mixed_time(m: Model, system: System, spec: Speculation | None, *, n_dec, ctx_dec, n_pre, T_pre, ctx_pre, G: int,
               precision: str, kv_dtype: str, basis: str, priors: Priors | None, layout: Layout | None,
               attn_ctx=None, c_max=None):
    """One step carrying n_dec decodes and n_pre prompt pieces (T_pre tokens) — one roofline.step, vectorised.

    The step is taken as n = n_dec + n_pre sequences at their mean context, each adding T / n new
    tokens: its tokens T = n_dec·(K + 1 or 1) + T_pre (weights, matmul FLOP, communication) are
    exact, and so are its KV reads where KV is linear in context. The LM head samples the decodes' tokens and
    one row per prompt piece. A piece of c prompt tokens after
    `done` sees the causal mean context done + c/2 (ctx_pre sums those). The attention FLOP follow each new token's
    own context: attn_ctx sums it over the step's tokens (default: every decode token at its sequence's context,
    pieces of equal size, T_pre/n_pre tokens each at ctx_pre/n_pre, in units of a decode token's FLOP per key:
    prompt_key_share), S_attn = attn_ctx / T. With speculation the
    decoding sequences also pay the draft's K one-token steps.
    c_max: the step's largest prompt piece, where the step is one (the simulator's); under attention data
    parallelism it stays whole on one group beside that group's share of the decodes (piece_group_tokens), which the
    busiest group carries at least. None: the pieces spread evenly (the cadence train's step, an average of steps).
    """
    per_dec = spec.K + 1 if spec else 1
    n = np.asarray(n_dec + n_pre, dtype=float)
    T = n_dec * per_dec + T_pre
    if attn_ctx is None:  # (T_pre = 0 where n_pre = 0)
        attn_ctx = per_dec * np.asarray(ctx_dec, dtype=float) + prompt_key_share(m) * T_pre * np.asarray(
            ctx_pre, dtype=float) / np.maximum(n_pre, 1e-9)
    kw = dict(G=G, precision=precision, kv_dtype=kv_dtype, basis=basis, priors=priors)
    dp = (layout or default_layout(m, G)).dp(G)
    T_piece = piece_group_tokens(c_max, n_dec * per_dec, dp) if c_max is not None and dp > 1 else None
    t = np.asarray(step(m, system, B=n, S=np.maximum((ctx_dec + ctx_pre) / n, 1.0), phase="decode", S_new=T / n,
                        sampled=n_dec * per_dec + n_pre, layout=layout, T_piece=T_piece,
                        S_attn=np.maximum(attn_ctx / np.maximum(T, 1e-9), 1.0), **kw).v("t_step"), dtype=float)
    if spec is not None and not spec.lookup:  # (an n-gram lookup runs no draft)
        d = spec.draft_model(m)
        has = np.asarray(n_dec, dtype=float) > 0
        B = np.maximum(n_dec, 1)
        t_d = np.asarray(step(d, system, B=B, S=np.maximum(ctx_dec / B, 1.0), phase="decode",
                              layout=layout if spec.draft is None else None, **kw).v("t_step"), dtype=float)
        t = t + np.where(has, spec.K * t_d, 0.0)
    return t if t.ndim else float(t)
