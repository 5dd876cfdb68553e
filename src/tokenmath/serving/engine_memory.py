"""What a serving engine leaves for the KV cache on each chip, by the engine's own rule for sizing its pool.

Every engine holds, besides the weights and the KV pool, an activation workspace for its largest step
(max_num_tokens tokens), communication buffers and a runtime context; each sizes the pool its own way
(catalog/engines/<engine>.yaml `memory:`):

    activations (per chip):  W_act = 2 · T_max · N · H · c_act        (c_act by tensor-parallel ways)
    of_free  (TensorRT-LLM): kv_pool = G · f · (C − W_all/G − W_act − W_rt)
                             f = free_gpu_memory_fraction of what the weights, the activations and the
                             runtime leave (the engine profiles a max_num_tokens step before sizing)
    of_total (vLLM):         kv_pool = G · (f · C − W_all/G − W_act − W_rt)
                             f = gpu_memory_utilization of the whole memory holds everything
    static   (SGLang):       kv_pool = G · (C − R − W_all/G)
                             R = max(R_0 + r_tok · chunk + r_graph · graph_bs + tp · pp/8 · 1 GiB, R_min)
                             (mem_fraction_static = (C − R)/C caps weights plus KV; tp the stage's chips, attention
                             DP ranks included (SGLang's tp_size); graph_bs 256 at tp < 4 below 160 GB. SGLang's
                             further cuda_graph_max_bs · dp_size · 3-4.5 MB under DP attention is not taken: at the
                             dp of wide-EP deployments it exceeds the GPU, so those set mem_fraction_static themselves)
    simple   (no rule):      kv_pool = f · (G · C − W_all)

Under attention data parallelism (tp < G) each of the dp = G/tp attention groups holds its own copy of every
non-expert weight (attention, dense layers, shared experts, router, embeddings), so the chips hold more
than W_all:

    W_held = W_exp + (W_all − W_exp) · G / tp          W_exp = L_moe · E · N_expert · b_exp (split over G)

and W_held stands for W_all in the rules above (Llama-4-Maverick FP8 on 8 chips at DP 8: 12 GB more on each;
DeepSeek-V3: 17 GB). Before 2026-11-24 round 7 the pool counted one copy.

W_act = 2·T·(N·H)·c bytes is NVIDIA's measured activation footprint of TensorRT-LLM (aiconfigurator-core
sdk/backends/trtllm_backend.py ACTIVATION_COEFFICIENTS: dense 11, 6.5, 5, 5 and MoE 22, 13, 10, 10 at
TP 1, 2, 4, ≥ 8), which aiconfigurator also uses for vLLM; W_rt = NCCL buffers (0.34-0.39 GB at TP ≥ 2)
plus the CUDA context and library workspaces (0.51 GiB observed; same file's systems/*.yaml misc).
"""

from __future__ import annotations

from ..core import arch
from ..core.derive import formula, lift, value_of
from ..core.records import Model, System

__all__ = ["activation_bytes", "kv_pool_engine", "reserved_static", "held_weight_bytes"]

GiB = 2.0**30
MiB = 2.0**20


@formula("W_act = 2 · T_max · N · H · c_act", unit="B")
def activation_bytes(T_max, N, H, c_act):
    return 2 * T_max * N * H * c_act


@formula("W_held = W_exp + (W_all − W_exp) · G / tp", unit="B")
def weights_held(W_exp, W_all, G, tp):
    return W_exp + (W_all - W_exp) * G / tp


@formula("W_stage = W_held / pp", unit="B")
def stage_weights(W_held, pp):
    return W_held / pp


def held_weight_bytes(m: Model, W_all, G: int, tp: float, precision: str | None = None, explain: bool = False,
                      pp: int = 1):
    """The weights the G chips hold: W_all, or with attention data parallelism (tp < G, an MoE) the non-expert
    weights once per attention group (module doc); 1/pp of that where the G chips are one stream of a pipeline
    of pp stages (roofline.Layout.pp)."""
    W = _held(m, W_all, G, tp, precision, explain)
    if pp <= 1:
        return W
    return stage_weights(W, lift(explain, "pp", pp, "", "layout: pipeline stages, each holding 1/pp of the layers"))


def _held(m: Model, W_all, G: int, tp: float, precision: str | None, explain: bool):
    if m.moe is None or tp >= G or not arch.n_moe_layers(m):
        return W_all
    pc = arch.param_counts(m)
    b = arch.bytes_per(arch.weight_formats(m, precision)["experts"])
    src = m.file or m.name
    W_exp = lift(explain, "W_exp", arch.n_moe_layers(m) * m.moe.n_routed_experts * float(value_of(pc.expert)) * b,
                 "B", f"{src}: routed experts L_moe·E·N_expert·b_exp, split over the chips")
    return weights_held(W_exp, W_all, lift(explain, "G", G, "chips", "given"),
                        lift(explain, "tp", tp, "", "layout: attention tensor-parallel ways (dp = G/tp groups)"))


@formula("kv_pool = G · f · (C − W_all/G − W_act − W_rt)", unit="B")
def kv_pool_of_free(G, f, C, W_all, W_act, W_rt):
    return G * f * (C - W_all / G - W_act - W_rt)


@formula("kv_pool = G · (f · C − W_all/G − W_act − W_rt)", unit="B")
def kv_pool_of_total(G, f, C, W_all, W_act, W_rt):
    return G * (f * C - W_all / G - W_act - W_rt)


@formula("R = max(R_0 + r_tok · chunk + r_graph · graph_bs + tp · pp/8 · GiB, R_min)", unit="B")
def reserved_static(R_0, r_tok, chunk, r_graph, graph_bs, tp, pp, GiB, R_min):  # noqa: N803
    return max(R_0 + r_tok * chunk + r_graph * graph_bs + tp * pp / 8 * GiB, R_min)


@formula("kv_pool = G · (C − R − W_all/G)", unit="B")
def kv_pool_static(G, C, R, W_all):
    return G * (C - R - W_all / G)


@formula("kv_pool = f_kv · (G · C − W_all)", unit="B")
def kv_pool_simple(f_kv, G, C, W_all):
    return f_kv * (G * C - W_all)


def _coef(m: Model, tp: float, eng: dict) -> float:
    table = eng.get("activation_coefficients", {})
    row = table.get("moe" if m.moe is not None else "dense", {})
    if not row:
        return 0.0
    keys = sorted(int(k) for k in row)
    k = max([x for x in keys if x <= max(tp, 1)] or [keys[0]])
    return float(row[k] if k in row else row[str(k)])


def kv_pool_engine(eng: dict, m: Model, system: System, G: int, W_all, tp: float = 1.0, explain: bool = False,
                   precision: str | None = None, pp: int = 1):
    """The KV pool (bytes, all G chips) the engine `eng` (a catalog/engines entry) leaves beside W_all of weights
    (held once per attention group where tp < G, 1/pp of them on one stream of a pipeline: `held_weight_bytes`)."""
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    src = lambda k: f"{eng.get('file', 'engine')}: {eng.get('sources', {}).get(k, eng.get('source', ''))}"  # noqa: E731
    rule = str(eng.get("memory", "simple"))
    C = system.chip.hbm_capacity_bytes
    Cq = g("C", C, "B", system.chip.source_of("hbm_capacity_bytes"))
    Gq = g("G", G, "chips", "given")
    Wq = W_all if not explain or hasattr(W_all, "explain") else g("W_all", W_all, "B", "every weight in its format")
    Wq = held_weight_bytes(m, Wq, G, tp, precision, explain, pp)
    f = g("f", float(eng["kv_memory_fraction"]), "", src("kv_memory_fraction"))
    if rule == "simple":
        return kv_pool_simple(f.renamed("f_kv") if hasattr(f, "renamed") else f, Gq, Cq, Wq)
    if rule == "static":
        big = eng.get("max_num_tokens_large_gpu")
        chunk = float(big if big and C >= 160e9 else eng["max_num_tokens"])
        # the engine's tp_size is every chip of the stage (attention DP ranks included), its dp_size G / tp
        small = eng.get("graph_max_batch_small_tp") and G < 4 and C < 160 * GiB
        gk = "graph_max_batch_small_tp" if small else "graph_max_batch"
        gbs = float(eng.get(gk, 512))
        R = reserved_static(g("R_0", float(eng["reserve_base_bytes"]), "B", src("reserve_base_bytes")),
                            g("r_tok", float(eng["reserve_per_token_bytes"]), "B/tok", src("reserve_per_token_bytes")),
                            g("chunk", chunk, "tok", src("max_num_tokens")),
                            g("r_graph", float(eng["reserve_per_graph_seq_bytes"]), "B", src("reserve_per_graph_seq_bytes")),
                            g("graph_bs", gbs, "seq", src(gk)), g("tp", G, "", "the stage's chips (the engine's tp_size)"),
                            g("pp", pp, "", "layout: pipeline stages"),
                            g("GiB", GiB, "B", "2^30 bytes"),
                            g("R_min", float(eng["reserve_min_bytes"]) if C > 60e9 else 0.0, "B", src("reserve_min_bytes")))
        return kv_pool_static(Gq, Cq, R, Wq)
    W_act = activation_bytes(g("T_max", float(eng["max_num_tokens"]), "tok", src("max_num_tokens")),
                             g("N", m.n_heads, "", f"{m.file or m.name}: query heads (all of them: c_act falls with tp)"),
                             g("H", m.head_dim, "", m.file or m.name),
                             g("c_act", _coef(m, tp, eng), "", src("activation_coefficients")))
    W_rt = g("W_rt", float(eng.get("runtime_bytes", 0.0)) + (float(eng.get("nccl_bytes", 0.0)) if G > 1 else 0.0),
             "B", src("runtime_bytes") + ("; " + src("nccl_bytes") if G > 1 else ""))
    fn = kv_pool_of_free if rule == "of_free" else kv_pool_of_total
    return fn(Gq, f, Cq, Wq, W_act, W_rt)
