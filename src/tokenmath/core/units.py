"""SI units at the edges: parse "3.35 TB/s" into 3.35e12, and print every number one way.

Inside tokenmath every plain float is SI (s, bytes, FLOP, FLOP/s, bytes/s, USD); the unit lives in the
variable's name. This module is the only place that turns text into numbers or numbers into text:
decimal prefixes for rates and bytes (TB/s, GB), binary prefixes only when spelled out (GiB), and
three significant figures with the unit always shown.
"""

from __future__ import annotations

import math
import re

import numpy as np

from .errors import TokenmathError

__all__ = ["parse_quantity", "fmt", "UnitError", "DIMENSION_OF_SUFFIX", "PRECISION_BYTES", "COMPUTE_FORMAT", "KV_FORMATS"]

# Bytes per element of each number format that weights, KV cache and activations are stored in.
# Block-scaled 4-bit formats carry their scales: MXFP4 is 4-bit values with one 8-bit (E8M0) scale per
# 32 (OCP Microscaling Formats spec v1.0) = 4.25 bits; NVFP4 one 8-bit (E4M3) scale per 16 (NVIDIA,
# developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference) = 4.5 bits.
# Block-scaled FP8 (DeepSeek-V3's recipe, and the FP8 releases of Qwen3, Kimi K2, MiniMax, GLM: config.json
# quantization_config weight_block_size [128, 128]) adds one FP32 scale per 128 × 128 block; its GEMMs are
# their own kernels (measured apart from per-tensor FP8 in the kernel tables).
# Group-quantised INT4 weights carry a scale and a zero point per group: gpt-fast's int4 (quantize.py
# WeightOnlyInt4QuantHandler, groupsize 32) one BF16 scale and one BF16 zero per 32 = 4 + 32/32 = 5 bits;
# AWQ/GPTQ at group 128 an FP16 scale and a 4-bit zero per 128 = 4 + 20/128 bits. MLX's group quantisation
# (mlx.core.quantize defaults: group_size 64, a 16-bit scale and a 16-bit bias per group; mlx-lm's "-4bit" and "-8bit"
# conversions, recalled, not re-read here) = 4 + 32/64 and 8 + 32/64 bits.
# llama.cpp's GGUF blocks (ggml-common.h: block_q4_0 = one FP16 scale + 32 4-bit values, 18 bytes; block_q8_0 = one FP16
# scale + 32 int8 values, 34 bytes): 4.5 and 8.5 bits a weight. Both multiply at the 8-bit integer rate: llama.cpp's CUDA
# matmul for quantised weights (ggml-cuda/mmq.cuh) quantises the activations to q8_1 and runs int8 dot products (int8 MMA,
# dp4a) over the unpacked weights, W8A8 for Q4_0 as for Q8_0 (recalled from the source, not re-read here).
# The k-quants (ggml-common.h: super-blocks of 256): block_q6_K = 128 + 64 + 16 scale bytes + an FP16 scale = 210 bytes,
# 6.5625 bits. A k-quant "mix" (_S, _M, _L) stores some tensors (attn_v, ffn_down in part of the layers, the output
# matrix) in a wider k-quant, so it is priced at its whole-file average: llama.cpp's quantize listing for LLaMA-v1-7B
# (6.74B weights) gives Q2_K 2.63, Q3_K_S 2.75, Q3_K_M 3.06, Q3_K_L 3.35, Q4_K_S 3.59, Q4_K_M 3.80, Q5_K_S 4.33 and
# Q5_K_M 4.45 GiB (recalled, not re-read here: estimates); MMQ multiplies them at the 8-bit rate, as Q4_0.
# A 3-bit GPTQ checkpoint (AutoGPTQ QuantLinear, recalled, not re-read here: qzeros packed at the weights' bit width,
# one FP16 scale a group) at group 128 stores 3 + 19/128 bits a weight. QServe's W4A8 (arXiv 2405.04532, progressive
# group quantisation, recalled, not re-read here: estimate) 4-bit weights with a UINT8 scale and a UINT4 zero per group
# of 128 under a per-channel FP16 scale (negligible), 4 + 12/128 bits, multiplied at the INT8 rate (its GEMM widens the
# weights to INT8 in registers and takes INT8 activations).
# The legacy GGUF blocks beside Q4_0 (ggml-common.h, recalled, not re-read here): block_q4_1 = an FP16 scale and an FP16 min
# + 16 bytes of 4-bit values (20 bytes a 32, 5.0 bits), block_q5_0 = an FP16 scale + 4 bytes of fifth bits + 16 bytes
# (22 bytes, 5.5 bits), block_q5_1 = scale, min, 4 + 16 bytes (24 bytes, 6.0 bits); MMQ multiplies them at the 8-bit rate.
# MXFP8 and MXFP6 (OCP Microscaling Formats spec v1.0): 8- and 6-bit elements with one 8-bit (E8M0) scale per 32, 8.25 and
# 6.25 bits, multiplied by MXFP8 activations at the FP8 rate (Blackwell's kind::mxf8f6f4 MMA runs FP6 at its FP8 rate;
# MI355X lists FP6 at its FP4 one, not counted: a bound on the slow side). FP6-LLM's FP6 (arXiv 2401.14112, TC-FPx;
# DeepSpeed's FP6, torchao's fpx_weight_only(3, 2): e3m2 weights with one FP16 scale per output channel, negligible)
# is weight-only: 6 bits a weight, dequantised to FP16 inside the GEMM and multiplied at the 16-bit rate.
# ModelOpt's W4A8 AWQ (TensorRT-LLM 'w4a8_awq', recalled, not re-read here: an estimate) stores AWQ's 4-bit weights with an
# FP16 scale per 128 and no zero, 4 + 16/128 bits, and multiplies them with FP8 activations at the FP8 rate (QServe's W4A8
# multiplies INT8 activations: 'w4a8_g128').
# 8-bit integer weights are multiplied one of two ways, and the format's name says which (one rule for every chip,
# whichever peaks its catalog entry lists):
#   'int8' — weight-only, W8A16 (TensorRT-LLM int8_wo, gpt-fast's int8, bitsandbytes LLM.int8()'s weights, GPTQ/AWQ-style
#            8-bit): the weights are dequantised to 16 bits inside the GEMM and multiplied at the chip's 16-bit rate;
#   'w8a8' — 8-bit weights and activations (SmoothQuant, TensorRT-LLM int8_sq, vLLM's INT8 W8A8): the chip's INT8
#            tensor-core peak, the catalog's peak_flop_per_s.int8. A chip that lists none carries them at its 16-bit
#            rate, and says so (Chip.widened_note).
# GGUF blocks and W4A8 multiply 8-bit integers too (llama.cpp's q8_1 activations; QServe's INT8 GEMM): W8A8's rate.
# So COMPUTE_FORMAT's values are peak names, not storage names: 'int8' there is the INT8 tensor-core peak, which the
# storage format 'int8' (weight-only) does not reach. Map a storage format through it once.
_GGUF_K_MIX_GIB_7B = {"gguf_q2_k": 2.63, "gguf_q3_k_s": 2.75, "gguf_q3_k_m": 3.06, "gguf_q3_k_l": 3.35,
                      "gguf_q4_k_s": 3.59, "gguf_q4_k_m": 3.80, "gguf_q5_k_s": 4.33, "gguf_q5_k_m": 4.45}
PRECISION_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "w8a8": 1.0, "fp4": 0.5, "int4": 0.5,
                   "mxfp4": 4.25 / 8, "nvfp4": 4.5 / 8, "fp8_block": 1.0 + 4.0 / (128 * 128),
                   "int4_g32": (4 + 32 / 32) / 8, "int4_g128": (4 + 20 / 128) / 8, "int3_g128": (3 + 19 / 128) / 8,
                   "int4_g64": (4 + 32 / 64) / 8, "int8_g64": (8 + 32 / 64) / 8, "w4a8_g128": (4 + 12 / 128) / 8,
                   "gguf_q4_0": 18 / 32, "gguf_q8_0": 34 / 32, "gguf_q6_k": 210 / 256,
                   "gguf_q4_1": 20 / 32, "gguf_q5_0": 22 / 32, "gguf_q5_1": 24 / 32,
                   "mxfp8": 8.25 / 8, "mxfp6": 6.25 / 8, "fp6": 6 / 8, "w4a8_fp8_g128": (4 + 16 / 128) / 8,
                   **{k: gib * 2**30 / 6.74e9 for k, gib in _GGUF_K_MIX_GIB_7B.items()}}

# element formats a KV cache is stored in (a weight format that names its kernels — w8a8, GGUF blocks, grouped INT4 — is
# not one: KV quantisation is per element or per head, as engines' kv_cache_dtype options list it)
KV_FORMATS = ("fp32", "bf16", "fp16", "fp8", "int8", "fp4", "nvfp4", "int4")

# storage formats -> the tensor-core format whose peak their matmuls run at (weight-only INT8, MLX's 8-bit groups
# among them, at the 16-bit one; the weight-only INT4 formats' 'int4' is widened to 16 bits by Chip.peak_precision)
COMPUTE_FORMAT = {"int8": "bf16", "w8a8": "int8", "mxfp4": "fp4", "nvfp4": "fp4", "fp8_block": "fp8", "int4_g32": "int4",
                  "int4_g128": "int4", "int4_g64": "int4", "int8_g64": "bf16", "int3_g128": "int4", "w4a8_g128": "int8",
                  "gguf_q4_0": "int8", "gguf_q8_0": "int8", "gguf_q6_k": "int8", **dict.fromkeys(_GGUF_K_MIX_GIB_7B, "int8"),
                  "gguf_q4_1": "int8", "gguf_q5_0": "int8", "gguf_q5_1": "int8", "mxfp8": "fp8", "mxfp6": "fp8",
                  "fp6": "bf16", "w4a8_fp8_g128": "fp8"}

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}

# base unit written in text -> (dimension, multiplier to SI)
_BASES = {
    "B/s": ("bytes_per_s", 1.0),
    "b/s": ("bytes_per_s", 1 / 8),  # bits per second
    "bit/s": ("bytes_per_s", 1 / 8),
    "bps": ("bytes_per_s", 1 / 8),
    "B": ("bytes", 1.0),
    "FLOP/s": ("flop_per_s", 1.0),
    "FLOPS": ("flop_per_s", 1.0),
    "FLOP": ("flop", 1.0),
    "s": ("s", 1.0),
    "ms": ("s", 1e-3),
    "us": ("s", 1e-6),
    "µs": ("s", 1e-6),
    "ns": ("s", 1e-9),
    "min": ("s", 60.0),
    "h": ("s", 3600.0),
    "hr": ("s", 3600.0),
    "day": ("s", 86400.0),
    "W": ("w", 1.0),
    "USD": ("usd", 1.0),
    "$": ("usd", 1.0),
}

# the dimension a field name promises, read from its unit suffix
DIMENSION_OF_SUFFIX = {
    "_bytes_per_s": "bytes_per_s",
    "_flop_per_s": "flop_per_s",
    "_bytes": "bytes",
    "_flop": "flop",
    "_s": "s",
    "_w": "w",
    "_usd": "usd",
}

_QTY = re.compile(r"^\s*([-+]?[0-9][0-9_,]*\.?[0-9]*(?:[eE][-+]?[0-9]+)?)\s*(.*?)\s*$")


class UnitError(TokenmathError):
    """A quantity whose text cannot be read, or whose unit is not the one its field needs."""


def _split_prefix(unit: str) -> tuple[float, str] | None:
    if unit in _BASES:
        return 1.0, unit
    for table in (_BINARY, _DECIMAL):
        for p, mult in table.items():
            if p and unit.startswith(p) and unit[len(p):] in _BASES:
                return mult, unit[len(p):]
    return None


def parse_quantity(text: str | float | int, dimension: str | None = None) -> float:
    """'3.35 TB/s' -> 3.35e12; '80 GiB' -> 85.9e9; '400 Gb/s' -> 50e9 bytes/s; '20 ms' -> 0.02.

    A bare number is taken as already SI. When `dimension` is given ('bytes_per_s', 'bytes', 's',
    'flop', 'flop_per_s', 'usd', 'w'), a unit of another dimension is an error.
    """
    if isinstance(text, bool):
        raise UnitError(f"expected a number, got {text!r}")
    if isinstance(text, (int, float)):
        if not math.isfinite(text):
            raise UnitError(f"{text!r} is not a finite number")
        return float(text)
    m = _QTY.match(str(text))
    if not m:
        raise UnitError(f"cannot read {text!r} as a quantity (e.g. '3.35 TB/s', '80 GB', '20 ms')")
    number = float(m.group(1).replace(",", "").replace("_", ""))
    if not math.isfinite(number):
        raise UnitError(f"{text!r} is not a finite number")
    unit = m.group(2).replace(" ", "")
    if unit == "":
        return number
    split = _split_prefix(unit)
    if split is None:
        raise UnitError(f"unknown unit {m.group(2)!r} in {text!r}")
    mult, base = split
    dim, to_si = _BASES[base]
    if dimension is not None and dim != dimension:
        raise UnitError(f"{text!r} is in {dim.replace('_', ' ')}, expected {dimension.replace('_', ' ')}")
    if to_si < 1:  # divide by the exact reciprocal so 20 us is 2e-05, not 1.9999999999999998e-05
        return number * mult / round(1 / to_si)
    return number * mult * to_si


_ENG = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_SMALL = [(1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
# units printed with SI prefixes; others are printed as plain numbers followed by the unit
_PREFIXED = {"s", "B", "B/s", "FLOP", "FLOP/s", "W", "B/tok", "FLOP/tok", "tok/s", "B/s/chip"}


def _sig3(x: float) -> str:
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if abs(x) < 1e-3:  # 1.26e-298, not three hundred zeros
        return f"{x:.3g}"
    digits = max(0, 2 - int(math.floor(math.log10(abs(x)))))
    s = f"{x:,.{digits}f}"
    return s


def fmt(value, unit: str = "") -> str:
    """One formatter for every number: three significant figures, engineering prefix, unit shown.

    fmt(0.0013, 's') -> '1.31 ms'; fmt(8e12, 'B/s') -> '8 TB/s'; fmt(5667.2) -> '5,667'.
    Arrays print as their range.
    """
    if isinstance(value, np.ndarray) and value.ndim > 0:
        if value.size == 0:
            return f"[] {unit}".strip()
        lo, hi = float(np.nanmin(value)), float(np.nanmax(value))
        return f"[{fmt(lo, unit)} … {fmt(hi, unit)}] ({value.size:,} points)"
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    x = float(value)
    if math.isinf(x):
        return "∞" + (f" {unit}" if unit else "")
    if math.isnan(x):
        return "n/a"
    if unit == "%":
        return f"{_sig3(x * 100)} %"
    if unit in _PREFIXED:
        ax = abs(x)
        if ax >= 1e21:  # past the largest prefix (E): 3.96e+25 FLOP, not 39,570,593 EFLOP
            return f"{x:.3g} {unit}"
        table = _ENG if ax >= 1 or unit != "s" else _SMALL
        if unit == "s" and ax >= 1:
            table = [(1.0, "")]
        if unit == "s" and ax >= 3600 * 48:
            return f"{_sig3(x / 86400)} days"
        if unit == "s" and ax >= 3600:
            return f"{_sig3(x / 3600)} h"
        if unit == "s" and ax >= 120:
            return f"{_sig3(x / 60)} min"
        for scale, prefix in table:
            if ax >= scale * 0.9995 or scale == table[-1][0]:
                return f"{_sig3(x / scale)} {prefix}{unit}"
    if unit in ("params", "tokens"):  # 671e9 -> '671B params', 15.6e12 -> '15.6T tokens' (B: billion, never bytes)
        for scale, word in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
            if abs(x) >= scale * 0.9995:
                return f"{_sig3(x / scale)}{word} {unit}"
        return f"{_sig3(x)} {unit}"
    if unit in ("USD", "$"):
        return f"${_sig3(x)}" if abs(x) >= 0.01 or x == 0 else f"${x:.3g}"
    if x == int(x) and abs(x) < 1e9:  # a whole count to a billion in full: 1,000,000 tok, not 1e+06
        return f"{int(x):,}" + (f" {unit}" if unit else "")
    if abs(x) >= 1e6 or (abs(x) < 1e-3 and x != 0):
        return f"{x:.3g}" + (f" {unit}" if unit else "")
    if abs(x) >= 100:
        s = f"{x:,.0f}"
    else:
        s = _sig3(x)
    return s + (f" {unit}" if unit else "")
