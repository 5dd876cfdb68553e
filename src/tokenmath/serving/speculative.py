"""Speculative decoding and multi-token prediction (MTP): tokens per verify step, and what the draft costs.

A draft proposes K tokens (n_draft in the formulas: K is the KV heads); the target model checks them
in one step that carries K + 1 new tokens per sequence, keeps the accepted prefix and adds one token
of its own. With each draft token accepted with probability α (given the one before it was):

    tau        = (1 − α^(K+1)) / (1 − α)          expected tokens per step (α = 1: K + 1)
                                                  (Leviathan, Kalman & Matias 2023, "Fast Inference
                                                  from Transformers via Speculative Decoding", eq. 1)
    t_spec     = t_verify + K · t_draft           the verify step (B sequences, K + 1 new tokens
                                                  each, at context S) plus K one-token draft steps
    tpot       = t_spec / tau

The draft is an MTP module — DeepSeek-V3's is one transformer block that shares the embedding and
the output head, applied K times for K tokens (DeepSeek-V3 technical report §2.2, arXiv:2412.19437)
— modelled as the target model cut to `mtp_layers` blocks; or a draft model from the catalog. Both
run on the replica's chips, and every step time is `roofline.step`. An acceptance length (the mean
tokens per step that papers such as EAGLE report) is turned into α by inverting tau(α).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import arch
from ..core.derive import Q, formula, lift, value_of
from ..core.errors import InputError
from ..core.records import Model, Priors, System
from ..core.roofline import Layout, Step, default_layout, step

__all__ = ["Speculation", "SpecStep", "tokens_per_step", "spec_step_time", "spec_tpot", "acceptance_from_length",
           "mtp_module", "speculative_step"]


@formula("tau = (1 − alpha^(n_draft + 1)) / (1 − alpha)", unit="tok")
def tokens_per_step(alpha, n_draft):
    a = np.asarray(alpha, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(a < 1, (1 - a ** (n_draft + 1)) / np.where(a < 1, 1 - a, 1.0), n_draft + 1.0)
    return float(out) if out.ndim == 0 else out


@formula("t_spec = t_verify + n_draft · t_draft", unit="s")
def spec_step_time(t_verify, n_draft, t_draft):
    return t_verify + n_draft * t_draft


@formula("tpot = t_spec / tau", unit="s")
def spec_tpot(t_spec, tau):
    return t_spec / tau


def acceptance_from_length(length, K: int) -> float:
    """α such that tau(α, K) equals a stated acceptance length (mean tokens per verify step, 1 ≤ L ≤ K + 1)."""
    L = float(length)
    if not 1 <= L <= K + 1:
        raise InputError(f"an acceptance length of {L:g} tokens per step is impossible with {K} draft tokens "
                         f"(it lies between 1 and K + 1 = {K + 1})")
    if L >= K + 1:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):  # tau(α) rises monotonically from 1 to K + 1
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tokens_per_step(mid, K) < L else (lo, mid)
    return (lo + hi) / 2


def mtp_module(m: Model, layers: int = 1) -> Model:
    """The target model cut to `layers` blocks (MoE blocks where the model has experts), with its head."""
    moe = m.moe.model_copy(update={"first_dense_layers": 0, "layer_step": 1}) if m.moe is not None else None
    return m.model_copy(update={
        "name": f"{m.name}-mtp{layers}", "n_layers": layers, "moe": moe, "n_sliding_layers": 0,
        "n_kv_layers": None if m.n_kv_layers is None else min(layers, m.n_kv_layers),
        "linear_attention": None, "n_dense_mlp_layers": None,  # a hybrid's MTP blocks are attention + MLP/MoE
        "attention_groups": None if m.attention_groups is None else  # the main (largest) group's shape
        (m.attention_groups[0].model_copy(update={"n_layers": layers}),),
        "published_total_params": None, "published_active_params": None})


@dataclass(frozen=True)
class Speculation:
    """K draft tokens per step accepted at rate alpha, drafted by an MTP module or by `draft` (a catalog model)."""

    K: int
    alpha: float
    draft: Model | None = None  # None: an MTP module of `mtp_layers` blocks of the target
    mtp_layers: int = 1
    lookup: bool = False  # n-gram / prompt lookup: drafts copied from the context, no model to run or hold

    def __post_init__(self):
        if not 1 <= self.K <= 64 or int(self.K) != self.K:
            raise InputError(f"--mtp (draft tokens per step) must be a whole number from 1 to 64 (got {self.K})")
        if not 0 <= self.alpha <= 1:
            raise InputError(f"--acceptance is a per-token rate in [0, 1] (got {self.alpha})")
        if not 1 <= self.mtp_layers <= 16:
            raise InputError(f"MTP layers must be between 1 and 16 (got {self.mtp_layers})")

    @property
    def kind(self) -> str:
        if self.lookup:
            return "n-gram lookup in the context (no draft model)"
        return f"draft model {self.draft.name}" if self.draft is not None else f"MTP module ({self.mtp_layers} block)"

    @property
    def tokens_per_step(self) -> float:
        return tokens_per_step(self.alpha, self.K)

    def draft_model(self, m: Model) -> Model:
        return self.draft if self.draft is not None else mtp_module(m, self.mtp_layers)

    def extra_weight_bytes(self, m: Model, precision: str) -> float:
        """Weights the draft adds to memory: a draft model whole; an MTP module without the shared embedding/head;
        none for an n-gram lookup."""
        if self.lookup:
            return 0.0
        d = self.draft_model(m)
        W = float(value_of(arch.model_weight_bytes(d, precision)))
        if self.draft is None:  # the module shares the target's embedding and head
            W -= arch.param_counts(d).by_kind["embeddings"] * arch.bytes_per(arch.weight_formats(d, precision)["embeddings"])
        return W

    def extra_kv_bytes(self, m: Model, S, kv_dtype: str):
        """KV the draft holds per sequence at context S (its own layers' cache; none for an n-gram lookup)."""
        kv = arch.kv_stored_bytes(self.draft_model(m), S, kv_dtype)
        return kv * 0 if self.lookup else kv


@dataclass
class SpecStep:
    """One speculative step: the verify step, one draft step, their sum, and tokens per step (tau)."""

    verify: Step
    draft: Step
    t_spec: object
    tau: object
    tpot: object

    def v(self, name: str):
        return value_of(getattr(self, name))


def speculative_step(m: Model, system: System, spec: Speculation, *, G: int, B, S, precision: str | None = None,
                     kv_dtype: str | None = None, basis: str = "prior", priors: Priors | None = None,
                     layout: Layout | None = None, explain: bool = False) -> SpecStep:
    """t_spec = t_verify(B, S, K + 1 tokens each) + K · t_draft(B, S); tau tokens per sequence per step."""
    kw = dict(G=G, B=B, S=S, phase="decode", precision=precision, kv_dtype=kv_dtype or m.kv_dtype, basis=basis,
              priors=priors, explain=explain)
    verify = step(m, system, layout=layout, S_new=spec.K + 1, **kw)
    d = spec.draft_model(m)
    draft = step(d, system, layout=layout if spec.draft is None else default_layout(d, G), **kw)
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    K = g("n_draft", spec.K, "tok", "given: draft tokens per step (--mtp)")
    alpha = g("alpha", spec.alpha, "", "given: per-token acceptance rate")
    t_v = verify.t_step.renamed("t_verify") if isinstance(verify.t_step, Q) else verify.t_step
    t_d = draft.t_step.renamed("t_draft") if isinstance(draft.t_step, Q) else draft.t_step
    if spec.lookup:  # drafts matched in the sequence's own tokens: no draft step on the chips
        t_d = g("t_draft", 0.0, "s", "n-gram / prompt lookup: drafts copied from the context, no model run")
    t = spec_step_time(t_v, K, t_d)
    tau = tokens_per_step(alpha, K)
    return SpecStep(verify, draft, t, tau, spec_tpot(t, tau))
