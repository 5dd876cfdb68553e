"""Frozen, validated records for what the catalog holds: chips, systems, models, efficiency priors.

All figures are SI floats (bytes, bytes/s, FLOP/s, s, W, USD). Each record keeps `sources`, a map
from field name (dotted for nested figures, e.g. `peak_flop_per_s.fp8`) to where the figure comes
from, and `estimates`, the fields that are estimates rather than published values. `evolve` returns
a copy with fields replaced (used by `--set`), marking the replaced fields' source.

Every figure has a physical range, declared once per record in `RANGES` (interval notation, e.g.
`"(0, 1]"` for an efficiency) and checked by one validator; NaN and infinity are refused everywhere.
So a catalog file, a profile or a `--set` cannot hand the analyses a zero efficiency, a negative price
or a capacity of 1e-300 bytes.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .errors import InputError
from .units import COMPUTE_FORMAT, PRECISION_BYTES

ENGINES = ("trtllm", "sglang", "vllm")  # serving engines whose kernels can be measured apart (Priors.for_engine)


def kernel_engine(engine: str | None) -> str | None:
    """The engine whose measured kernels a run reads (Priors.for_engine): a serving engine of ENGINES, or None —
    the engines' median — for the default scheduler settings (catalog/engines/default.yaml) or none named."""
    return engine if engine in ENGINES else None

__all__ = ["EngineSettings", "Chip", "System", "Fabric", "Model", "MLA", "MoE", "SparseAttention", "LinearAttention", "AttentionGroup", "CrossAttention", "Priors", "Curve", "TrainingPrior",
           "Record", "Part", "in_interval", "MODULE_KINDS",
           "ENGINES", "kernel_engine", "Intervals", "IntervalGroup"]

# The kinds of weight a model holds, each of which may be stored in its own format (Model.weight_dtypes):
# attention projections (and a sparse-attention indexer), dense MLPs, routed experts, shared experts, the
# MoE routers, and the embedding tables (input embedding and LM head).
MODULE_KINDS = ("attention", "mlp", "experts", "shared_experts", "router", "embeddings")


@lru_cache(maxsize=None)
def _interval(text: str) -> tuple[float, float, bool, bool]:
    """'(0, 1]' -> (0.0, 1.0, lo_open=True, hi_open=False)."""
    m = re.fullmatch(r"\s*([(\[])\s*([^,]+),\s*([^)\]]+)([)\]])\s*", text)
    if not m:
        raise ValueError(f"bad interval {text!r}")
    return float(m.group(2)), float(m.group(3)), m.group(1) == "(", m.group(4) == ")"


def in_interval(x: float, interval: str) -> bool:
    lo, hi, lo_open, hi_open = _interval(interval)
    return (x > lo if lo_open else x >= lo) and (x < hi if hi_open else x <= hi)


class Part(BaseModel):
    """A frozen, validated record or part of one: NaN/inf refused, each figure in its `RANGES` interval.

    A figure may be a number, or a map or tuple of numbers (every value is checked); None is skipped.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
    RANGES: ClassVar[dict[str, str]] = {}

    @model_validator(mode="after")
    def _in_range(self):
        for name, interval in type(self).RANGES.items():
            v = getattr(self, name, None)
            values = v.items() if isinstance(v, dict) else ((None, x) for x in v) if isinstance(v, tuple) \
                else () if v is None else ((None, v),)
            for key, x in values:
                if isinstance(x, (int, float)) and not isinstance(x, bool) and not in_interval(x, interval):
                    label = f"{name}.{key}" if key is not None else name
                    raise ValueError(f"{label} must be in {interval} (got {x:g})")
        return self


class Record(Part):

    name: str
    display_name: str = ""
    file: str = ""  # where it was loaded from
    source: str = ""  # the entry's default source
    sources: dict[str, str] = Field(default_factory=dict)
    estimates: tuple[str, ...] = ()
    notes: str = ""

    def source_of(self, field_name: str) -> str:
        """Where a figure comes from: its own source, else the entry's, with the file."""
        src = self.sources.get(field_name) or self.source or "no source given"
        tag = " (estimate)" if field_name in self.estimates else ""
        where = f"{self.file}: " if self.file else ""
        return f"{where}{src}{tag}"

    def evolve(self, **changes) -> "Record":
        """A copy with fields replaced; the replaced fields' source becomes the override."""
        sources = dict(self.sources)
        for k in changes:
            sources[k] = "overridden with --set"
        data = self.model_dump()
        data.update(changes)
        data["sources"] = sources
        return type(self).model_validate(data)


class Chip(Record):
    kind: Literal["chip"] = "chip"
    vendor: str = ""
    year: int | None = None
    peak_flop_per_s: dict[str, float]  # dense peak by precision: bf16, fp8, fp4, int8
    hbm_capacity_bytes: float
    hbm_bandwidth_bytes_per_s: float
    # the capacities the part ships with at the same bandwidth and compute (unified-memory Macs); the largest is
    # hbm_capacity_bytes, and a row stating another is this part with that capacity
    memory_options_bytes: tuple[float, ...] = ()
    memory_configurable: bool = False  # DIMMs (a server CPU): any capacity a row states is the machine's
    # the weights live in on-chip SRAM (Groq LPU, Cerebras WSE): hbm_capacity_bytes and hbm_bandwidth_bytes_per_s are
    # the SRAM's, in decimal bytes as the vendor states them (SRAM is not built from 2^n-bit DRAM dies)
    on_chip_memory: bool = False
    scaleup_bandwidth_bytes_per_s: float | None = None  # per chip, per direction
    scaleout_bandwidth_bytes_per_s: float | None = None  # per chip, per direction
    power_w: float | None = None
    rental_usd_per_hour: float | None = None
    rental_price_date: str | None = None
    host_memory_bytes: float | None = None  # CPU-attached memory per chip (share)
    host_memory_bandwidth_bytes_per_s: float | None = None
    llc_bytes: float | None = None  # last-level cache in front of memory (a calibrated profile: fitted tier)
    llc_bandwidth_bytes_per_s: float | None = None
    llc_hit_exponent: float | None = None  # h = min(1, C/ws)^p of a cyclic stream (p = 1: random replacement)
    ranks_per_chip: int | None = None  # ranks a parallel degree counts per chip where it counts cores (AWS Neuron)
    priors: str = "default"  # name of the Priors entry that applies

    # a kilobyte-scale device to a petabyte-scale one: every chip, host and calibrated CPU lies well inside
    RANGES = {"year": "[1950, 2100]", "peak_flop_per_s": "[1e6, 1e19]", "hbm_capacity_bytes": "[1e6, 1e15]",
              "memory_options_bytes": "[1e6, 1e15]", "hbm_bandwidth_bytes_per_s": "[1e6, 1e17]", "scaleup_bandwidth_bytes_per_s": "[1e6, 1e15]",
              "scaleout_bandwidth_bytes_per_s": "[1e6, 1e15]", "power_w": "(0, 1e6]",
              "rental_usd_per_hour": "(0, 1e4]", "host_memory_bytes": "[1e6, 1e16]",
              "host_memory_bandwidth_bytes_per_s": "[1e6, 1e15]", "ranks_per_chip": "[1, 64]"}

    @field_validator("peak_flop_per_s")
    @classmethod
    def _peaks(cls, v: dict[str, float]) -> dict[str, float]:
        if not v:
            raise ValueError("needs at least one precision")
        return v

    # the same 16-bit width: a chip that lists one of fp16/bf16 runs the other at that rate (the data sheets that
    # list both give them the same tensor-core peak: NVIDIA A100/H100/B200, AMD MI300X/MI355X)
    _SIBLING = {"fp16": "bf16", "bf16": "fp16"}

    def peak_precision(self, precision: str) -> str:
        """The peak that `peak(precision)` uses for a storage format (a --precision value): the format its matmuls run
        at (core/units.py COMPUTE_FORMAT: weight-only 'int8' at the 16-bit rate, 'w8a8' and GGUF at the INT8 one),
        else its 16-bit sibling, else the best wider one (for FP8 and FP4, the best wider floating-point one; for
        W8A8 on a chip that lists no INT8 peak or one below its 16-bit peak, the 16-bit one)."""
        order = ["fp4", "fp8", "int8", "bf16", "fp16", "fp32"]
        precision = COMPUTE_FORMAT.get(precision, precision)
        if precision == "int8" and precision in self.peak_flop_per_s:
            wide = self.peak_precision("bf16")
            if self.peak_flop_per_s.get(wide, 0.0) > self.peak_flop_per_s["int8"]:
                # Blackwell Ultra (B300: INT8 153.5 TOPS beside BF16 2,250): 8-bit weights dequantised to the 16-bit
                # GEMM outrun its INT8 one, as weight-only kernels do
                return wide
        if precision == "int4" and precision not in self.peak_flop_per_s:
            # 4-bit integer weights (AWQ, GPTQ, gpt-fast) are dequantised inside the kernel and multiplied
            # with 16-bit activations (W4A16: Marlin, Machete, AWQ's GEMM): the 16-bit tensor-core rate, not FP8's
            precision = "bf16"
        if precision in self.peak_flop_per_s:
            return precision
        if self._SIBLING.get(precision) in self.peak_flop_per_s:
            return self._SIBLING[precision]
        i = order.index(precision) if precision in order else 0
        for p in order[i + 1:]:
            # a floating-point format without its own tensor cores is widened to a floating-point one (FP8
            # weights on Ampere or a T4 run as W8A16 at the 16-bit rate), never to the INT8 rate
            if p in self.peak_flop_per_s and not (p == "int8" and precision in ("fp4", "fp8")):
                return p
        return precision

    def widened_note(self, precision: str) -> str | None:
        """How a floating-point format this chip has no tensor cores for is carried (FP4 on Hopper, FP8 on Ampere:
        weight-only kernels, roofline.kernel_format), or an INT8 one whose peak the catalog does not list (W8A8, GGUF),
        or None where the chip multiplies it natively."""
        p = COMPUTE_FORMAT.get(precision, precision)
        wide = self.peak_precision(precision)
        if p == "int8" and wide != p and p in self.peak_flop_per_s:
            return (f"{self.name}'s INT8 peak is below its {wide.upper()} one: its {precision} matmuls are carried at "
                    f"the {wide.upper()} rate, the 8-bit weights dequantised as a weight-only kernel does (an "
                    f"assumption: an engine running the INT8 tensor cores there would be slower)")
        if p == "int8" and wide != p:
            return (f"the catalog lists no INT8 peak for {self.name}: its {precision} matmuls (8-bit integer weights "
                    f"times 8-bit activations) are carried at its {wide.upper()} rate (an assumption: INT8 tensor "
                    f"cores the catalog does not list would run them faster)")
        if p not in ("fp4", "fp8") or wide == p:
            return None
        return (f"{self.name} has no {p.upper()} tensor cores: the {p.upper()} weights are read at their own width "
                f"and multiplied at the {wide.upper()} rate, dequantised inside the GEMM (a weight-only kernel, at "
                f"best as fast as the chip's own {wide.upper()} GEMM)")

    def peak(self, precision: str) -> float:
        """Dense peak FLOP/s at a precision; a format the chip lacks runs at its 16-bit sibling or best wider one."""
        key = self.peak_precision(precision)
        if key not in self.peak_flop_per_s:
            raise InputError(f"{self.name} has no {precision} (or wider) peak in the catalog; "
                             f"it lists {', '.join(self.peak_flop_per_s)}: pass --precision one of them "
                             f"(serving stacks cast a float32 checkpoint to 16 bits)")
        return self.peak_flop_per_s[key]


class System(Record):
    """A scale-up domain of chips and the network that joins domains."""

    kind: Literal["system"] = "system"
    chip: Chip
    domain_chips: int  # chips in one scale-up domain (NVLink / ICI)
    scaleup_bandwidth_bytes_per_s: float | None = None  # per chip per direction; defaults to the chip's
    scaleout_bandwidth_bytes_per_s: float | None = None
    rental_usd_per_chip_hour: float | None = None
    rental_price_date: str | None = None
    scaleout_fabric: str | None = None  # the catalog/fabrics entry its NICs speak (documentation; the rate is per chip)
    # a torus domain (Cloud TPU ICI): its dimensions (2·dims links a chip share the scale-up rate) and the axis extent
    # whose multiples wrap around; None: a switched domain, every chip at its full scale-up rate to any other
    torus_dims: int | None = None
    torus_wrap_extent: int | None = None

    RANGES = {"domain_chips": "[1, 1e6]", "scaleup_bandwidth_bytes_per_s": "[1e6, 1e15]", "torus_dims": "[1, 6]",
              "torus_wrap_extent": "[2, 1e4]",
              "scaleout_bandwidth_bytes_per_s": "[1e6, 1e15]", "rental_usd_per_chip_hour": "(0, 1e4]"}

    @property
    def scaleup_bw(self) -> float:
        return self.scaleup_bandwidth_bytes_per_s or self.chip.scaleup_bandwidth_bytes_per_s or 0.0

    def ring_bw(self, n):
        """Per-chip rate of a ring collective (all-reduce, all-gather, reduce-scatter) over n chips of one domain: the
        scale-up rate on a switched domain, the links of the axes the group spans on a torus (kernels.torus_bus_bandwidth)."""
        if not self.torus_dims:
            return self.scaleup_bw + 0.0 * np.asarray(n, dtype=float)
        from .kernels import torus_bus_bandwidth
        return torus_bus_bandwidth(self.scaleup_bw, n, self.torus_dims, self.torus_wrap_extent or 0)

    @property
    def scaleout_bw(self) -> float:
        return self.scaleout_bandwidth_bytes_per_s or self.chip.scaleout_bandwidth_bytes_per_s or 0.0

    @property
    def usd_per_chip_hour(self) -> float | None:
        return self.rental_usd_per_chip_hour or self.chip.rental_usd_per_hour

    def price_source(self) -> str:
        if self.rental_usd_per_chip_hour:
            return self.source_of("rental_usd_per_chip_hour")
        return self.chip.source_of("rental_usd_per_hour")


class Fabric(Record):
    """A scale-out network technology (InfiniBand NDR, RoCE, EFA...): one port's rate per direction, and the
    phrases that name it in published setups (read by the validation name matcher)."""

    kind: Literal["fabric"] = "fabric"
    port_bandwidth_bytes_per_s: float  # one NIC port, per direction
    names: tuple[str, ...] = ()  # how setups write it: "NDR", "ConnectX-7", "CX7"...

    RANGES = {"port_bandwidth_bytes_per_s": "[1e6, 1e15]"}


class MLA(Part):
    """Multi-head latent attention (DeepSeek-V2/V3): K and V are rebuilt from a shared latent."""

    RANGES = {k: "[1, 1e5]" for k in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                      "v_head_dim")}
    q_lora_rank: int | None = None
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


class SparseAttention(Part):
    """Top-k token selection by a light indexer (DeepSeek sparse attention, V3.2)."""

    RANGES = {"index_topk": "[1, 1e9]", "index_n_heads": "[1, 1e5]", "index_head_dim": "[1, 1e5]",
              "index_bytes_per_token_layer": "(0, 1e6]", "n_index_layers": "[1, 1e5]"}
    index_topk: int
    index_n_heads: int
    index_head_dim: int
    index_bytes_per_token_layer: float = 132.0  # FP8 key (128 B) + one fp32 scale (4 B)
    # layers that run their own indexer (GLM-5.3 shares one indexer across 4 layers: indexer_types); None = every
    # attention layer. Layers without one reuse the previous indexer's selection: no indexer weights, keys or FLOP.
    n_index_layers: int | None = None


class LinearAttention(Part):
    """Token mixers that keep a fixed-size recurrent state per sequence instead of a KV cache that grows with
    context: Gated DeltaNet (Qwen3-Next / Qwen3.5), Kimi Delta Attention (Kimi K3; a gated delta rule with a decay
    per key channel) and Mamba2 (Nemotron-H, Nemotron 3). One shape covers both:
    keys of key_heads × key_dim (Mamba2: the B and C projections, n_groups × d_state), values of value_heads ×
    value_dim (Mamba2: x, heads × head_dim), an output gate of the value width (GDN z, Mamba2 z),
    `gates_per_head` scalars per value head (GDN a and b; Mamba2 dt), a depthwise causal convolution of
    `conv_kernel` taps over keys, queries and values, and a state of value_heads × key_dim × value_dim
    elements (`state_dtype`) that each token reads and rewrites. Mamba1 (Jamba) fits the same shape with one
    channel per value head (value_heads = d_inner, value_dim 1, key_dim = d_state), no key heads (its B, C and
    dt come from the x_proj and dt_proj inside `extra_params`) and no gate from D. MiniMax's lightning attention
    (a decayed linear attention) is keys and queries of N × H, values and an output gate of N × H, no
    convolution (conv_kernel 0) and a state of N × H × H. arch.py owns the formulas."""

    RANGES = {"n_layers": "[1, 1e5]", "key_heads": "[0, 1e5]", "key_dim": "[1, 1e5]", "value_heads": "[1, 1e5]",
              "value_dim": "[1, 1e5]", "gates_per_head": "[0, 16]", "conv_kernel": "[0, 64]",
              "state_flop_per_element": "[0, 100]",
              "extra_params": "[0, 1e12]"}
    kind: Literal["gated_deltanet", "mamba2", "kda", "mamba1", "lightning"]
    n_layers: int  # layers whose token mixer this is, in place of softmax attention
    key_heads: int
    key_dim: int
    value_heads: int
    value_dim: int
    gates_per_head: int
    conv_kernel: int
    state_dtype: str = "fp32"
    # FLOP per state element per token in decode (recurrent form): gated delta rule decay 1 + S·k 2 + rank-1
    # update 2 + S·q 2 = 7; Mamba2 decay·h + dt·x⊗B 3 + C·h 2 = 5
    state_flop_per_element: float = 7.0
    # a layer's parameters outside the projections above (Kimi Delta Attention: its forget gate's low-rank
    # projection D·d_k + d_k·h_v·d_k; Mamba1: x_proj, dt_proj and A)
    extra_params: float = 0.0


class AttentionGroup(Part):
    """Attention layers that share one shape, where a model mixes several (Model.attention_groups): Gemma 4's
    sliding and global layers (own KV heads and head sizes), MiMo-V2-Flash's, DeepSeek-V4's compressed
    layers, a NAS model's layers that keep attention. Per layer: queries N × H (through a rank-r_q bottleneck
    where q_lora_rank is set), keys K × H, values K × H_v (none where `values_from_keys`: values come from the
    key projection), output N·H_v → D (grouped low rank where o_lora_rank is set: N·H_v·r_o + G_o·r_o·D). The
    cache keeps, per token, an entry of K·(H + H_v)·b bytes (K·H·b where `one_kv_vector`: one cached vector is
    read as key and as value, DeepSeek-V4). `window` keeps the last w tokens uncompressed; with
    `compress_ratio` r the whole context is also kept as one entry per r tokens (DeepSeek-V4 CSA r = 4, HCA
    r = 128); `topk` caps the entries (tokens, or compressed entries) one decode step reads, chosen by an
    indexer whose key costs `index_bytes_per_entry` per entry and 2·n_idx·d_idx FLOP to score.
    `extra_params` are a layer's parameters outside those projections (compressors, indexer, mixers), and
    `state_bytes` a fixed per-sequence buffer per layer (a compressor's partial window). arch.py owns the
    formulas."""

    RANGES = {k: "[1, 1e9]" for k in ("n_layers", "n_heads", "n_kv_heads", "head_dim", "v_head_dim", "q_lora_rank",
                                      "o_lora_rank", "o_groups", "window", "compress_ratio", "topk",
                                      "index_n_heads", "index_head_dim")}
    RANGES.update({"index_bytes_per_entry": "[0, 1e6]", "extra_params": "[0, 1e12]", "state_bytes": "[0, 1e12]"})
    name: str = ""  # what the config calls these layers (sliding_attention, full_attention, csa...)
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    v_head_dim: int | None = None  # value head size where it differs from head_dim
    q_lora_rank: int | None = None
    o_lora_rank: int | None = None
    o_groups: int = 1
    values_from_keys: bool = False
    one_kv_vector: bool = False
    window: int | None = None
    compress_ratio: int | None = None
    topk: int | None = None
    index_n_heads: int | None = None
    index_head_dim: int | None = None
    index_bytes_per_entry: float = 0.0
    extra_params: float = 0.0
    state_bytes: float = 0.0

    @property
    def h_v(self) -> int:
        return self.v_head_dim or self.head_dim


class CrossAttention(Part):
    """Cross-attention layers that read a fixed cache of an image's vision tokens (Llama 3.2 Vision, `mllama`): of
    the model's n_layers, `n_layers` attend (with the self-attention shape N, K, H) not to the text but to the
    `kv_tokens` tokens a vision encoder made of the image (tiles × (patches + 1)). Their keys and values are
    projected once, at prefill, and cached per sequence (one entry per vision token, not per text token); every
    decode step reads that cache in full. The vision encoder (ViT of `vision_layers` layers of width
    `vision_d_model` and MLP `vision_d_ff`, and a projector `vision_out_dim` → D) runs once per image at prefill;
    its weights are held in memory. `vision_extra_params` are the encoder's other weights (tile and position
    embeddings, patch convolution, norms, biases). kv_tokens 0 is a text-only request: serving stacks then skip
    the cross-attention layers, MLP included (vLLM mllama.py skip_cross_attention). arch.py owns the formulas."""

    RANGES = {"n_layers": "[1, 1e5]", "kv_tokens": "[0, 1e7]", "vision_layers": "[0, 1e4]",
              "vision_d_model": "[0, 1e6]", "vision_d_ff": "[0, 1e7]", "vision_out_dim": "[0, 1e7]",
              "vision_extra_params": "[0, 1e12]"}
    n_layers: int
    kv_tokens: int
    vision_layers: int = 0
    vision_d_model: int = 0
    vision_d_ff: int = 0
    vision_out_dim: int = 0
    vision_extra_params: float = 0.0


class MoE(Part):
    RANGES = {"n_routed_experts": "[1, 1e5]", "n_shared_experts": "[0, 1e4]", "d_ff_expert": "[1, 1e7]",
              "first_dense_layers": "[0, 1e5]", "layer_step": "[1, 1e5]", "d_latent": "[1, 1e6]"}
    n_routed_experts: int
    experts_per_token: int
    n_shared_experts: int = 0
    d_ff_expert: int
    d_ff_shared_expert: int | None = None  # a shared expert's hidden size where it differs (Qwen2-MoE); None: d_ff_expert
    first_dense_layers: int = 0  # leading layers with a dense MLP instead of experts
    layer_step: int = 1  # every layer_step-th layer (after the dense ones) is MoE; others dense
    # latent MoE (Nemotron 3 Super/Ultra): routed experts work in a d_latent-wide space, entered and left through
    # a D×d_latent projection each per MoE layer; None: experts take D
    d_latent: int | None = None

    @model_validator(mode="after")
    def _k_le_e(self):
        if not 1 <= self.experts_per_token <= self.n_routed_experts:
            raise ValueError("experts_per_token must be between 1 and n_routed_experts")
        if self.d_ff_shared_expert is not None and self.d_ff_shared_expert < 1:
            raise ValueError("d_ff_shared_expert must be at least 1")
        if self.d_ff_expert < 1 or self.n_shared_experts < 0 or self.first_dense_layers < 0 or self.layer_step < 1:
            raise ValueError("d_ff_expert and layer_step must be at least 1, n_shared_experts and "
                             "first_dense_layers at least 0")
        return self


class Model(Record):
    kind: Literal["model"] = "model"
    family: str = ""
    hypothetical: bool = False
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int  # dense MLP hidden size (dense layers of an MoE too)
    vocab_size: int
    tie_embeddings: bool = False
    mlp_matrices: int = 3  # 3 for gated (SwiGLU/GeGLU) MLPs, 2 for plain
    attention: Literal["mha", "gqa", "mqa", "mla"] = "gqa"
    mla: MLA | None = None
    sparse_attention: SparseAttention | None = None
    sliding_window: int | None = None
    n_sliding_layers: int = 0  # layers that attend only within sliding_window
    n_kv_layers: int | None = None  # layers with their own KV cache when layers share one; None = all
    moe: MoE | None = None
    # hybrids: linear_attention.n_layers of the n_layers mix tokens through a fixed-size state, not attention
    linear_attention: LinearAttention | None = None
    # layers of several attention shapes (Gemma 4, MiMo-V2-Flash, DeepSeek-V4, NAS models): when set, these
    # groups, not n_heads/n_kv_heads/head_dim/sliding_window/mla, are the attention layers (n_heads... then
    # name the largest group, for layouts); layers in no group and not linear have no token mixer
    attention_groups: tuple[AttentionGroup, ...] | None = None
    # Llama 3.2 Vision: cross_attention.n_layers of the n_layers attend to a fixed cache of the image's tokens
    cross_attention: CrossAttention | None = None
    attention_output_gate: bool = False  # q_proj also yields a sigmoid gate on the output (Qwen3-Next / Qwen3.5)
    qk_norm: bool = False  # an RMSNorm of q and of k before RoPE (Qwen3, Gemma 3, OLMo 2): host calls and small kernels
    sandwich_norms: bool = False  # a norm after attention and after the MLP as well as before each (Gemma 2/3: four)
    # the modelling code an eager step runs (a code of catalog/eager/ops.yaml: its torch calls per step, core.eager);
    # None: the one its family runs in transformers (Llama's where the family is not listed)
    eager_code: str | None = None
    n_dense_mlp_layers: int | None = None  # layers with a dense MLP where not every non-MoE layer has one (Nemotron-H)
    weight_dtype: str = "bf16"  # the matmuls' format, and every module's unless weight_dtypes says otherwise
    weight_dtypes: dict[str, str] = Field(default_factory=dict)  # module kind -> storage format where it differs
    # a published quantised release of the model, by the format of its linear layers: the module kinds it keeps in
    # another format ({'nvfp4': {'attention': 'bf16'}}: NVIDIA's ModelOpt NVFP4 GLM-5 leaves every attention
    # projection in BF16), read where a row names that format (measure/validate/serving.checkpoint_formats)
    quantized_formats: dict[str, dict[str, str]] = Field(default_factory=dict)
    kv_dtype: str = "bf16"
    # the vendor's FP8 checkpoint scales weights per block of this many rows and columns (quantization_config
    # weight_block_size); its FP8 matmuls then run block-scaled kernels (roofline: the fp8_block curves)
    fp8_block_size: int | None = None
    max_context: int | None = None
    published_total_params: float | None = None
    published_active_params: float | None = None

    RANGES = {"n_layers": "[1, 1e5]", "d_model": "[1, 1e6]", "n_heads": "[1, 1e5]", "n_kv_heads": "[1, 1e5]",
              "head_dim": "[1, 1e5]", "d_ff": "[1, 1e7]", "vocab_size": "[1, 1e8]", "mlp_matrices": "[1, 4]",
              "sliding_window": "[1, 1e10]", "n_sliding_layers": "[0, 1e5]", "n_kv_layers": "[1, 1e5]",
              "n_dense_mlp_layers": "[0, 1e5]", "max_context": "[1, 1e10]", "published_total_params": "[1, 1e16]", "fp8_block_size": "[1, 1e5]",
              "published_active_params": "[1, 1e16]"}

    @model_validator(mode="after")
    def _consistent(self):
        for f in ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "vocab_size", "d_ff"):
            if getattr(self, f) < 1:
                raise ValueError(f"{f} must be at least 1")
        for f, fmt_ in (("weight_dtype", self.weight_dtype), ("kv_dtype", self.kv_dtype),
                        *((f"weight_dtypes.{k}", v) for k, v in self.weight_dtypes.items())):
            if fmt_ not in PRECISION_BYTES:
                raise ValueError(f"{f} {fmt_!r} is not one of {', '.join(PRECISION_BYTES)}")
        for k in self.weight_dtypes:
            if k not in MODULE_KINDS:
                raise ValueError(f"weight_dtypes: unknown module kind {k!r}; one of {', '.join(MODULE_KINDS)}")
        for lin, kinds in self.quantized_formats.items():
            for k, fmt_ in ((f"quantized_formats.{lin}", lin), *((f"quantized_formats.{lin}.{k}", v)
                                                                  for k, v in kinds.items())):
                if fmt_ not in PRECISION_BYTES:
                    raise ValueError(f"{k} {fmt_!r} is not one of {', '.join(PRECISION_BYTES)}")
            if set(kinds) - set(MODULE_KINDS):
                raise ValueError(f"quantized_formats.{lin}: unknown module kind {sorted(set(kinds) - set(MODULE_KINDS))[0]!r};"
                                 f" one of {', '.join(MODULE_KINDS)}")
        if self.attention == "mla" and self.mla is None:
            raise ValueError("attention 'mla' needs an 'mla' block")
        if self.n_sliding_layers and not self.sliding_window:
            raise ValueError("n_sliding_layers needs sliding_window")
        n_lin = self.linear_attention.n_layers if self.linear_attention else 0
        if self.n_sliding_layers + n_lin > self.n_layers:
            raise ValueError("n_sliding_layers (and linear-attention layers) exceed n_layers")
        if self.linear_attention and self.linear_attention.state_dtype not in PRECISION_BYTES:
            raise ValueError(f"linear_attention.state_dtype {self.linear_attention.state_dtype!r} is not one of "
                             f"{', '.join(PRECISION_BYTES)}")
        if self.attention_groups is not None:
            n_grp = sum(g.n_layers for g in self.attention_groups)
            if not self.attention_groups or n_grp + n_lin > self.n_layers or self.n_sliding_layers or self.mla:
                raise ValueError("attention_groups need at least one group, at most n_layers layers with the "
                                 "linear-attention ones, and no n_sliding_layers or mla beside them")
        if self.cross_attention is not None and (self.cross_attention.n_layers + self.n_sliding_layers + n_lin
                                                 >= self.n_layers or self.mla or self.attention_groups):
            raise ValueError("cross_attention layers must leave a self-attention layer, beside no mla or "
                             "attention_groups")
        if self.n_dense_mlp_layers is not None and not 0 <= self.n_dense_mlp_layers <= self.n_layers:
            raise ValueError("n_dense_mlp_layers must be between 0 and n_layers")
        if self.n_kv_layers is not None and not 1 <= self.n_kv_layers <= self.n_layers:
            raise ValueError("n_kv_layers must be between 1 and n_layers")
        if self.moe is not None and self.moe.first_dense_layers + self.moe.layer_step > self.n_layers:
            raise ValueError("an MoE model needs an MoE layer: first_dense_layers + layer_step ≤ n_layers")
        return self


class Curve(Part):
    """An efficiency measured at several sizes x (rows M, context S, message bytes...): read in between as
    a power law (log y linear in log x), held flat beyond the ends (kernels.curve_value). `spread` is each
    point's relative spread (repeat-to-repeat, or across engines), when it was measured. With `unit: s` the
    curve is a time by size instead (e.g. `t_kernel.bf16`, one GEMM call's fixed cost over rows M), with
    `unit: count` a positive count (e.g. `moe_route.fp8`, passes over the routed activations, by ep)."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    spread: tuple[float, ...] | None = None
    source: str = ""
    unit: Literal["", "s", "count"] = ""

    RANGES = {"x": "(0, 1e15]", "spread": "[0, 10]"}

    @model_validator(mode="after")
    def _shape(self):
        if not self.x or len(self.x) != len(self.y) or (self.spread is not None and len(self.spread) != len(self.x)):
            raise ValueError("a curve needs x and y (and spread, if given) of the same non-zero length")
        if any(not v > 0 for v in self.x) or any(b <= a for a, b in zip(self.x, self.x[1:])):
            raise ValueError("curve x must be positive and strictly increasing")
        if self.unit in ("s", "count") and any(not v > 0 for v in self.y):
            raise ValueError(f"a curve of {'times' if self.unit == 's' else 'counts'} needs positive y")
        if self.unit == "" and any(not 1e-3 <= v <= 1.5 for v in self.y):
            raise ValueError("curve y is an efficiency: a fraction of a peak in [0.001, 1.5]")
        return self


GEMM_CURVES = ("eta_mm.", "eta_bw.")  # a dense GEMM's curves: one library kernel in every engine (Priors.for_engine)


class Priors(Record):
    """Efficiency priors: what fraction of the peaks real kernels reach, and fixed costs per step.

    `curves` refine a scalar prior where it was measured by size, keyed `<prior>.<precision>` or
    `<prior>` (kernels.efficiency looks up the precision's curve first, then the plain one, then the
    scalar): `eta_mm` over GEMM rows M (fraction of the precision's dense peak; expert GEMMs read it at
    their rows per expert), `eta_bw` over GEMM rows M (weight streaming, fraction of W), `eta_kv` over
    context S (attention-decode KV streaming), `eta_kv_bytes` over the KV bytes one decode-attention
    kernel reads (one layer, one chip; preferred to eta_kv where present), `eta_attn_prefill` over the
    FLOP of one prefill-attention kernel (fraction of the BF16 peak; the context kernel's law, `attn_ctx_*` by head
    size and MLA's `attn_mla_ctx_*` by heads per chip, preferred where present), `eta_scaleup.allreduce` over the
    all-reduce message bytes and `eta_scaleup.alltoall` over the bytes one expert dispatch or combine
    moves per chip (fractions of the scale-up link). Measured-kernel curves are written by
    measure/kernel_tables.py.
    `formats`, when set, are the only precisions the priors were measured at (a calibrated profile):
    predicting another is refused unless `allow_extrapolation` is set (then the interval widens).

    A calibrated profile of an eager framework (`tokenmath calibrate`) adds: `eta_gqa` over query heads
    per KV head (decode attention's rate relative to one, multiplying eta_kv_bytes), the times (`unit: s`)
    `t_kernel` over GEMM rows M (one call's fixed cost), `t_elt` and `t_route` over the bytes of one
    elementwise / MoE-routing kernel, and `dispatch_s` (`route_dispatch_s`, `expert_dispatch_s`), the host
    cost of one eager op (of one MoE routing call, of one call per expert hit), with `host_overlap`
    (0: host and device costs add, a CPU; 1: the device runs behind the host, a GPU). The ops are
    counted by core.eager.
    """

    kind: Literal["priors"] = "priors"
    generation: str = ""  # the hardware generation the priors were measured on ('hopper'...; '' = spec-sheet guesses)
    eta_flop: float  # large-shape GEMM, fraction of dense peak
    eta_bw: float  # streaming HBM reads, fraction of spec bandwidth
    eta_scaleup: float  # all-to-all / all-reduce, fraction of scale-up link bandwidth
    eta_scaleout: float  # same on the scale-out NICs
    scaleup_latency_s: float  # fixed cost of one collective inside a domain
    scaleout_latency_s: float  # fixed cost of one collective across domains
    step_overhead_s: float  # per forward step: launch, sampling, scheduling
    comm_overlap: float = 0.0  # fraction of communication hidden behind compute (0 = none)
    kernel_overhead_s: float = 0.0  # fixed cost of one GEMM kernel (launch, fill, tail), paid per layer per GEMM
    aux_kernel_s: float = 0.0  # fixed cost of one small non-matmul kernel (norm, activation, RoPE, routing), per layer
    # the same by GEMM format where measured (keys '<format>' and '<format>@<engine>'; seconds)
    kernel_overhead_fmt: dict[str, float] = Field(default_factory=dict)
    # the fused MoE op's fixed cost per MoE layer by expert format (same keys; seconds): measured kernel tables
    moe_overhead_fmt: dict[str, float] = Field(default_factory=dict)
    # a compute-bound GEMM's depth law by format (same keys): (eta_inf, K_half) of eta = eta_inf · K/(K + K_half)
    matmul_k_law_fmt: dict[str, tuple[float, float]] = Field(default_factory=dict)
    # a large GEMM's best-shape efficiency by format (same keys): what a search over shapes finds (MAMF)
    matmul_best_fmt: dict[str, float] = Field(default_factory=dict)
    matmul_m_half: float = 0.0  # rows at which a tiled GEMM reaches half its eta_flop (0: no small-M loss)
    eta_kv: float | None = None  # attention-decode KV streaming, fraction of bandwidth (None: eta_bw)
    ep_imbalance: float = 1.0  # busiest expert-parallel rank's load over uniform routing's (roofline critical path)
    alltoall_latency_s: float | None = None  # fixed cost of one expert dispatch or combine in a domain (None: scaleup_latency_s)
    curves: dict[str, Curve] = Field(default_factory=dict)
    formats: tuple[str, ...] | None = None
    allow_extrapolation: bool = False  # predict formats outside `formats` (a warning and a wide interval)
    dispatch_s: float = 0.0  # host cost of one eager op (0: fused engine, no eager inventory)
    route_dispatch_s: float = 0.0  # host cost of one MoE routing call (0: dispatch_s)
    expert_dispatch_s: float = 0.0  # host cost of one call of an expert hit's glue (0: dispatch_s)
    host_overlap: float = 0.0  # share of host dispatch hidden behind device work
    host_probe_s: float | None = None  # calibrate's tiny dense decode step (check-local re-times it: host drift)
    host_drift: float = 0.0  # relative drift of the host's per-op cost between calibration and use (widens intervals)

    def for_engine(self, engine: str | None) -> "Priors":
        """These priors with the kernels measured on `engine` (keys `<key>@<engine>`) in place of the engines'
        median, where that engine was measured; unchanged for None or an engine without curves.

        Only what differs by engine is swapped: attention backends, the fused MoE op, communication. A dense GEMM
        of one shape and format is the same library kernel (cuBLASLt, CUTLASS) in every engine, so the three
        engines' GEMM tables are three collections of one kernel (other versions, harnesses, clocks than any row
        ran) and the GEMM family — `eta_mm.*`, `eta_bw.*`, `kernel_overhead_fmt`, the depth law and the best
        shapes — keeps their median (the per-engine entries stay in the file as the evidence behind it). Read
        per engine, the public serving rows' p90 was 41.2 % and the silicon table's TTFT p90 134 %; with the
        median, 31.7 % and 126 % (validation/README.md, round 12)."""
        tag = f"@{engine}" if engine else None
        if not tag or not any(k.endswith(tag) for k in self.curves):
            return self
        curves = {k: c for k, c in self.curves.items() if "@" not in k}
        curves.update({k[:-len(tag)]: c for k, c in self.curves.items()
                       if k.endswith(tag) and not k.startswith(GEMM_CURVES)})
        moe = {k: v for k, v in self.moe_overhead_fmt.items() if "@" not in k}
        moe.update({k[:-len(tag)]: v for k, v in self.moe_overhead_fmt.items() if k.endswith(tag)})
        return self.model_copy(update={"curves": curves, "moe_overhead_fmt": moe, "name": f"{self.name}@{engine}"})

    def moe_overhead(self, fmt: str | None) -> tuple[float | None, str]:
        """(fixed cost of one fused MoE op of expert format `fmt`, its source), or None where not measured."""
        if fmt and fmt in self.moe_overhead_fmt:
            return self.moe_overhead_fmt[fmt], (f"{self.file + ': ' if self.file else ''}moe_overhead_fmt.{fmt}: "
                                                f"{self.sources.get('moe_overhead_fmt', 'measured')}")
        return None, ""

    def kernel_overhead(self, fmt: str | None) -> tuple[float, str]:
        """(fixed cost of one GEMM kernel of format `fmt`, its source): the format's measured value where there
        is one, else kernel_overhead_s."""
        if fmt and fmt in self.kernel_overhead_fmt:
            return self.kernel_overhead_fmt[fmt], (f"{self.file + ': ' if self.file else ''}kernel_overhead_fmt."
                                                   f"{fmt}: {self.sources.get('kernel_overhead_fmt', 'measured')}")
        return self.kernel_overhead_s, self.source_of("kernel_overhead_s")

    # the curves (by key, before any '.precision' or '@engine') that refine each scalar prior
    REFINED_BY: ClassVar[dict[str, tuple[str, ...]]] = {
        "eta_flop": ("eta_mm", "eta_attn_prefill", *(f"attn{k}_ctx_{t}" for k in ("", "_mla")
                                                      for t in ("t0", "t_seq", "t_q", "t_kv", "eta"))),
        "eta_bw": ("eta_bw",), "eta_kv": ("eta_kv", "eta_kv_bytes"),
        "eta_scaleup": ("eta_scaleup",)}

    def evolve(self, **changes) -> "Priors":
        """A copy with fields replaced; a scalar prior given a value (--set eta_bw=0.5) drops the measured curves
        that refine it, so the value given is the one used rather than silently overruled by a curve."""
        drop = {c for f in changes if f in self.REFINED_BY for c in self.REFINED_BY[f]}
        if drop and "curves" not in changes:
            changes["curves"] = {k: c for k, c in self.curves.items() if re.split(r"[.@]", k)[0] not in drop}
        return super().evolve(**changes)  # type: ignore[return-value]

    # an efficiency is a fraction of a peak that real kernels reach: below 0.1 % it is a typo, not a prior
    RANGES = {**{k: "[0.001, 1]" for k in ("eta_flop", "eta_bw", "eta_scaleup", "eta_scaleout", "eta_kv")},
              "comm_overlap": "[0, 1]", "scaleup_latency_s": "[0, 1]", "scaleout_latency_s": "[0, 1]",
              "step_overhead_s": "[0, 10]", "kernel_overhead_s": "[0, 1]", "aux_kernel_s": "[0, 1]", "matmul_m_half": "[0, 1e7]",
              "ep_imbalance": "[1, 10]", "alltoall_latency_s": "[0, 1]",
              "dispatch_s": "[0, 1]", "route_dispatch_s": "[0, 1]", "expert_dispatch_s": "[0, 1]",
              "host_overlap": "[0, 1]", "host_probe_s": "(0, 1]", "host_drift": "[0, 10]"}


class EngineSettings(Record):
    """A serving engine's scheduler defaults (`catalog/engines/NAME.yaml`), read by the simulator."""

    kv_memory_fraction: float  # share of the memory left after the weights that holds KV
    max_num_tokens: int  # tokens one step may carry
    max_batch: int  # sequences in flight
    chunk_tokens: int  # chunked prefill: tokens per step
    mtp_layers: int = 1  # transformer blocks of one MTP module
    # the scheduler rows under load run (serving/sim policies) and the KV pool's rule (serving/engine_memory.py)
    policy: Literal["continuous", "chunked", "disagg", "cadence"] | None = None
    memory: Literal["simple", "of_free", "of_total", "static"] = "simple"
    max_num_tokens_large_gpu: int | None = None  # the token budget on GPUs of 160 GB and more (SGLang)
    activation_coefficients: dict[str, dict[int, float]] = Field(default_factory=dict)  # dense/moe -> tp -> c_act
    runtime_bytes: float = 0.0  # CUDA context and library workspaces per chip
    nccl_bytes: float = 0.0  # NCCL buffers per chip (tp ≥ 2)
    reserve_base_bytes: float = 0.0  # SGLang's static reserve: constant metadata
    reserve_per_token_bytes: float = 0.0  # … per token of the prefill chunk
    reserve_per_graph_seq_bytes: float = 0.0  # … per sequence of the CUDA-graph batch
    graph_max_batch: int = 512  # … CUDA-graph batch
    graph_max_batch_small_tp: int | None = None  # … at tp < 4 on GPUs under 160 GB (SGLang: 256)
    reserve_min_bytes: float = 0.0  # … floor on > 60 GB GPUs
    # when an arrival can ride a step (serving/sim/replica.py): None = an idealised scheduler that sees it at once;
    # n ≥ 0 = it rides the step after the one in flight, n steps later still when the scheduler plans ahead
    schedule_ahead: int | None = None
    # the KV cache's element type where a run does not set it: 'auto' the model's own activation type whatever its
    # weights (vLLM, SGLang), 'checkpoint' what the checkpoint's quantisation config says (TensorRT-LLM)
    kv_cache_dtype: Literal["auto", "checkpoint"] | None = None
    # the share r of a running request's output still to come that admission keeps free for it (serving/sim/fastpath.py
    # held_tokens): 1 reserves the whole (TensorRT-LLM's guaranteed-no-evict), 0 none (vLLM V1 allocates as tokens come)
    kv_output_reserve: float = 1.0

    RANGES = {"kv_memory_fraction": "(0, 1]", "kv_output_reserve": "[0, 1]", "max_num_tokens": "[1, 1e7]",
              "max_batch": "[1, 1e7]",
              "chunk_tokens": "[1, 1e7]", "mtp_layers": "[1, 64]", "max_num_tokens_large_gpu": "[1, 1e7]",
              "runtime_bytes": "[0, 1e12]", "nccl_bytes": "[0, 1e12]", "reserve_base_bytes": "[0, 1e12]",
              "reserve_per_token_bytes": "[0, 1e9]", "reserve_per_graph_seq_bytes": "[0, 1e9]",
              "graph_max_batch": "[1, 1e6]", "graph_max_batch_small_tp": "[1, 1e6]",
              "reserve_min_bytes": "[0, 1e12]", "schedule_ahead": "[0, 8]"}


class TrainingPrior(Record):
    """A published training run's model-FLOP utilisation: the MFU prior `tokenmath train` uses.

    `mfu` is model FLOP (6·N_active + attention, no recomputation) per second over the dense peak at
    `peak_precision`; `row` is the run's id in shared/validation/public_measurements.csv (TRN-*).
    """

    kind: Literal["training"] = "training"
    row: str
    mfu: float
    peak_precision: str = "bf16"
    chip: str  # catalog chip name
    chips: int
    seq_len: int
    model: str = ""  # catalog model name, or a description
    active_params: float
    moe: bool = False
    global_batch_tokens: float
    recompute: Literal["none", "selective", "full"] = "selective"
    parallelism: str = ""
    system: str = ""  # catalog system the run used (its fabric), for the roofline carry (training.carry)

    RANGES = {"mfu": "(0, 1]", "chips": "[1, 1e7]", "seq_len": "[1, 1e9]", "active_params": "[1, 1e16]",
              "global_batch_tokens": "[1, 1e13]"}


class IntervalGroup(Part):
    """Prediction-interval bounds of one group: quantiles of ln(measured / predicted) over its rows."""

    RANGES = {"n": "[1, 1e9]", "lo": "[-10, 10]", "hi": "[-10, 10]"}
    n: int  # rows of the group itself (its parent's rows also shaped the bounds when n is small)
    lo: float
    hi: float

    @model_validator(mode="after")
    def _ordered(self):
        if not self.lo <= self.hi:
            raise ValueError("lo must not exceed hi")
        return self


class Intervals(Record):
    """Prediction intervals for predicted rates and times, derived from validation residuals.

    Groups are keyed `generation|phase|precision` (e.g. `hopper|decode|fp8`; `*` for any), from the most
    specific to `*|*|*`, the phase kept before the precision and, where the generation has no rows of the phase,
    before the generation; measure/intervals.py writes them. A predicted rate x lies in
    [x·e^lo, x·e^hi] with probability `nominal`; a time t (∝ 1/rate) in [t·e^−hi, t·e^−lo].
    """

    kind: Literal["intervals"] = "intervals"
    RANGES = {"nominal": "(0, 1)"}
    nominal: float
    method: str = ""
    groups: dict[str, IntervalGroup]

    @staticmethod
    def lookup_order(generation: str, phase: str, precision: str) -> tuple[str, ...]:
        """Group names from the most specific to `*|*|*`, the phase kept before the precision and the generation: a
        phase the generation has no rows of reads that phase's rows of every generation (an A100 TTFT under load
        misses as TTFTs do, not as A100 decode steps do)."""
        g, p, q = generation, phase, precision
        return f"{g}|{p}|{q}", f"{g}|{p}|*", f"*|{p}|{q}", f"*|{p}|*", f"{g}|*|{q}", f"{g}|*|*", "*|*|*"

    def group(self, generation: str, phase: str, precision: str) -> tuple[str, IntervalGroup]:
        """The most specific stored group for these keys, and its name."""
        gen = generation or "spec-sheet"
        for key in self.lookup_order(gen, phase, precision):
            if key in self.groups:
                return key, self.groups[key]
        raise ValueError(f"{self.file or self.name}: no interval group for {gen}|{phase}|{precision} (nor *|*|*)")
