// The page of `tokenmath web`: controls -> four API calls (serve, sweep, fastmode, frontier) -> numbers and plots.
// Every number shown comes formatted from the API (`explain=true` adds the CLI's formatter's text and the
// derivation); the plots are drawn here with Plotly from the API's arrays. Nothing is computed in the page.
"use strict";

const DEFAULTS = { model: "deepseek-v3", on: "gb200-nvl72", chips: "64", precision: "fp8", batch: "128",
                   context: "4096", basis: "prior", isl: "1000", osl: "1000", at_user_speed: "", split: "",
                   engine: "" };  // the lecture's example
// an empty target speed per user is the fast mode's speed: the lecture's fast-mode point on the frontier under load
const COLORS = { blue: "#1f77b4", orange: "#ff7f0e", green: "#2ca02c", red: "#d62728", purple: "#9467bd",
                 grey: "#7f7f7f" };
const $ = (id) => document.getElementById(id);
let renders = 0;
let inflight = null;

// ---- talking to the API ----------------------------------------------------------------------

async function api(path, params, signal) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== "" && v !== null && v !== undefined) q.append(k, v);
  }
  const r = await fetch(`/api/${path}?${q}`, { signal });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || `${r.status} ${r.statusText}`);
  return body;
}

function controls() {
  const out = {};
  for (const el of $("controls").elements) if (el.name) out[el.name] = el.value.trim();
  return out;
}

function logGrid(lo, hi, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(Math.round(lo * Math.pow(hi / lo, i / (n - 1))));
  return [...new Set(out)];
}

async function refresh() {
  const c = controls();
  location.replace("#" + new URLSearchParams(c));
  if (inflight) inflight.abort();
  inflight = new AbortController();
  const signal = inflight.signal;
  setStatus("computing…");
  const common = { model: c.model, on: c.on, chips: c.chips, precision: c.precision, basis: c.basis, explain: true };
  // marks at the chosen context S (the first value), curves over 256 … 2M tokens
  const contexts = [c.context, ...logGrid(256, 2 ** 21, 40)].join(",");
  try {
    const fastmode = api("fastmode", { ...common, context: c.context }, signal);
    // the frontier under load, at the target speed (or the fast mode's); it fails alone (a model too big for
    // KV, say) without blanking the page
    const frontier = fastmode.then((fast) => api("frontier", { ...common, isl: c.isl, osl: c.osl, engine: c.engine,
      at_user_speed: c.at_user_speed || (fastPoint(fast, "fast") || {}).tokens_per_s_per_sequence }, signal))
      .catch((e) => { if (e.name === "AbortError") throw e; return { error: e.message }; });
    const [serve, sweep, fast, fr] = await Promise.all([
      api("serve", { ...common, batch: c.batch, context: c.context, split: c.split, engine: c.engine }, signal),  // split: serve only
      api("sweep", { ...common, batch: "1:131072", context: contexts }, signal),
      fastmode,
      frontier,
    ]);
    fr.target = c.at_user_speed ? "the target" : "the fast mode's speed";
    render(serve, sweep, fast, fr, c);
    const warnings = [...(serve.warnings || []), ...(fr.error ? [`frontier under load: ${fr.error}`] : [])];
    setStatus(warnings.join(" · "), warnings.length ? "warning" : "");
  } catch (e) {
    if (e.name === "AbortError") return;
    setStatus(e.message, "error");
    document.body.dataset.state = "error";
  }
}

function fastPoint(fast, key) {  // on the roofline where the API has it, else the two-term model's
  const P = fast.points || {};
  return P[P.standard_roofline ? `${key}_roofline` : key];
}

function setStatus(text, kind = "") {
  $("status").textContent = text;
  $("status").className = kind;
}

// ---- numbers, each one click from its derivation ---------------------------------------------

function shown(doc, key, raw) {
  const e = doc.explain && doc.explain[key];
  if (!e) return text(raw === undefined ? "—" : String(raw));
  const b = document.createElement("button");
  b.type = "button";
  b.className = "num";
  b.textContent = e.value;
  b.dataset.key = key;
  b.setAttribute("aria-expanded", "false");
  b.addEventListener("click", () => toggleDerivation(b, e.text));
  return b;
}

function text(s, cls) {
  const span = document.createElement("span");
  span.textContent = s;
  if (cls) span.className = cls;
  return span;
}

function toggleDerivation(button, derivation) {
  const row = button.closest("tr");
  const next = row.nextElementSibling;
  const open = next && next.classList.contains("derivation") && next.dataset.key === button.dataset.key;
  row.parentElement.querySelectorAll("tr.derivation").forEach((r) => {
    if (r.previousElementSibling === row) r.remove();
  });
  row.querySelectorAll("button.num").forEach((b) => b.setAttribute("aria-expanded", "false"));
  if (open) return;
  const tr = document.createElement("tr");
  tr.className = "derivation";
  tr.dataset.key = button.dataset.key;
  const td = document.createElement("td");
  td.colSpan = row.children.length;
  const pre = document.createElement("pre");
  pre.textContent = derivation;
  td.appendChild(pre);
  tr.appendChild(td);
  row.after(tr);
  button.setAttribute("aria-expanded", "true");
}

function row(tbody, label, cells, cls) {
  const tr = document.createElement("tr");
  if (cls) tr.className = cls;
  const th = document.createElement("td");
  th.textContent = label;
  tr.appendChild(th);
  for (const c of cells) {
    const td = document.createElement("td");
    td.appendChild(c);
    tr.appendChild(td);
  }
  tbody.appendChild(tr);
  return tr;
}

function renderNumbers(serve, sweep, fast, fr) {
  $("title").textContent = `${serve.model} on ${serve.chips} chips of ${serve.system} — batch ${serve.batch}, context ` +
    `${serve.context} tok, ${serve.precision} weights, ${serve.kv_dtype} KV, ${serve.basis} basis`;
  const step = $("step").tBodies[0];
  step.replaceChildren();
  const terms = [["step time", "step_time_s"], ["  compute t_math", "t_math_s"], ["  weights t_weights", "t_weights_s"],
    ["  KV reads t_kv", "t_kv_s"], ["  communication t_comm", "t_comm_s"], ["  overhead", "t_overhead_s"],
    ["tokens/s per chip", "tokens_per_s_per_chip"], ["USD per million tokens", "usd_per_mtok"]];
  for (const [label, key] of terms) {
    const tr = row(step, label, ["prefill", "decode"].map((ph) => shown(serve, `${ph}.${key}`, serve[ph][key])));
    if (key === "step_time_s") tr.className = "headline";
  }
  row(step, "bound by", ["prefill", "decode"].map((ph) => text(serve[ph].bound)));

  const marks = $("marks").tBodies[0];
  marks.replaceChildren();
  const bstar = row(marks, "B* = R·ρ (batch where weight reads stop dominating; spec)",
    [shown(serve, "optimal_batch", serve.optimal_batch)], "headline");
  bstar.querySelector("td:last-child").id = "bstar";
  row(marks, "B* with efficiency priors", [shown(serve, "optimal_batch_prior", serve.optimal_batch_prior)]);
  row(marks, "R = F / (2·W/b_w), multiplies per parameter fetched", [shown(serve, "hardware_ratio", serve.hardware_ratio)]);
  row(marks, "ρ = N_total / N_active", [shown(serve, "rho", serve.rho)]);
  row(marks, `κ = t_kv1 / t_c1 at ${sweep.context} tok`, [shown(sweep, "kappa", sweep.kappa)]);
  row(marks, "balance batch B_bal = B*/(1 − κ)", [sweep.balance_batch == null ?
    text("∞: KV reads outrun compute at this context") : shown(sweep, "balance_batch", sweep.balance_batch)]);
  row(marks, "KV crossover context L* (two-term)", [shown(sweep, "kv_crossover_context", sweep.kv_crossover_context)]);
  const Lr = sweep.kv_crossover_context_roofline;
  row(marks, "L* on the roofline (with attention FLOP; found by bisection)", [Lr == null ?
    text("none: attention FLOP outgrow KV reads") : text(`${Math.round(Lr).toLocaleString("en-US")} tok`)]);
  const floorKey = sweep.cost_floor_usd_per_mtok != null ? "cost_floor_usd_per_mtok" : null;
  row(marks, "cost floor c_min (B → ∞)", [floorKey ? shown(sweep, floorKey, sweep[floorKey]) :
    text("no price in the catalog")]);
  row(marks, "c(1) / c_min: what batch 1 costs", [shown(sweep, "c1_over_cmin", sweep.c1_over_cmin)]);
  row(marks, "latency floor (all weights read once; spec)", [shown(serve, "latency_floor_s", serve.latency_floor_s)]);
  const fits = serve.memory.fits;
  row(marks, "memory: weights + KV", [shown(serve, "memory.required_bytes", serve.memory.required_bytes)]);
  row(marks, "of HBM", [shown(serve, "memory.capacity_bytes", serve.memory.capacity_bytes)]);
  row(marks, "fits", [text(fits ? "yes" : "NO", fits ? "" : "bad")]);

  renderLoad(fr);

  const f = $("fast").tBodies[0];
  f.replaceChildren();
  row(f, "batch ratio B_fast / B_std = 1/(p·s)", [shown(fast, "batch_ratio", fast.batch_ratio)]);
  row(f, "standard batch (two-term)", [shown(fast, "standard_batch", fast.standard_batch)]);
  row(f, "fast batch", [shown(fast, "fast_batch", fast.fast_batch)]);
  row(f, "KV share of the standard step", [shown(fast, "kv_share", fast.kv_share)]);
  row(f, "a slow mode saves at most", [shown(fast, "slow_mode_max_saving", fast.slow_mode_max_saving)]);
}

function count(x) {
  return Math.round(x).toLocaleString("en-US");
}

function sig(x, digits = 3) {
  return x.toLocaleString("en-US", { maximumSignificantDigits: digits });
}

function renderLoad(fr) {
  const t = $("load").tBodies[0];
  t.replaceChildren();
  if (fr.error) {
    $("load-title").textContent = "under load (tokenmath frontier)";
    row(t, "no frontier", [text(fr.error, "bad")]);
    return;
  }
  const at = fr.at;
  const asked = at ? `≥ ${sig(at.asked.user_speed)} tok/s per user` +
    (fr.target === "the target" ? "" : ` (${fr.target})`) : "";
  $("load-title").textContent = `under load: ISL ${count(fr.isl)} / OSL ${count(fr.osl)}, ${fr.policy} batching` +
    (at ? `, at ${asked}` : "");
  if (!at) {
    row(t, "target speed", [text("no fast-mode speed to aim at: give a target tok/s per user")]);
    return;
  }
  if (!at.met) {
    const f = at.fastest;
    row(t, `nothing reaches ${asked}: the fastest`, [text(`${sig(f.tokens_per_s_per_user)} tok/s per user`,
      "bad")], "headline");
    row(t, "  at concurrency", [text(count(f.concurrency))]);
    return;
  }
  const best = row(t, `tokens/s per chip (best at ${fr.target})`, [shown(fr, "tokens_per_s_per_chip",
    at.tokens_per_s_per_chip)], "headline");
  best.querySelector("td:last-child").id = "at-chip";
  row(t, "tokens/s per user", [shown(fr, "tokens_per_s_per_user", at.tokens_per_s_per_user)]);
  row(t, `concurrency (requests in flight) on ${at.chips} chips, ${at.layout}`, [text(count(at.concurrency))]);
  row(t, "TTFT (mean)", [shown(fr, "ttft_s", at.ttft_s)]);
  row(t, "TPOT (mean)", [shown(fr, "tpot_s", at.tpot_s)]);
  const sim = at.simulated;
  if (sim) {
    row(t, `simulated, ${count(sim.requests)} requests`, [text(`${sig(sim.tokens_per_s_per_chip)} tok/s per chip, ` +
      `${sig(sim.tokens_per_s_per_user)} per user`)]);
  }
}

// ---- plots -----------------------------------------------------------------------------------

function costOf(doc) {
  return doc.usd_per_mtok != null
    ? { key: "usd_per_mtok", label: "USD per million output tokens" }
    : { key: "chip_hours_per_mtok", label: "chip-hours per million output tokens (no price in catalog)" };
}

function vline(x, color, dash) {
  return { type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1, line: { color, width: 1.6, dash } };
}

function note(x, text, color, yFrac) {  // annotations on a log axis take log10(x)
  return { x: Math.log10(x), y: yFrac, xref: "x", yref: "paper", text, showarrow: false, xanchor: "left",
           font: { color, size: 11 }, bgcolor: "rgba(255,255,255,0.85)" };
}

function fitSplit(x, y, fits, name, color, width = 2.2) {
  // solid where weights + KV fit in HBM, dotted where they do not (joined at the edge)
  const yin = y.map((v, i) => (fits[i] ? v : null));
  const yout = y.map((v, i) => (!fits[i] || (i > 0 && !fits[i - 1]) || (i + 1 < y.length && !fits[i + 1]) ? v : null));
  return [
    { x, y: yin, name, mode: "lines", line: { color, width }, hovertemplate: "%{x:,}: %{y:.3s}<extra></extra>" },
    { x, y: yout, name: name + " (does not fit)", mode: "lines", line: { color, width: width * 0.8, dash: "dot" },
      showlegend: false, hovertemplate: "%{x:,}: %{y:.3s} (does not fit)<extra></extra>" },
  ];
}

function logTicks(lo, hi) {
  const out = [];
  for (let d = Math.floor(Math.log10(lo)); d <= Math.ceil(Math.log10(hi)); d++) {
    for (const m of [1, 2, 5]) out.push(m * 10 ** d);
  }
  return out;
}

function layout(title, xtitle, ytitle, extra = {}) {
  return { title: { text: title, font: { size: 13 } }, margin: { l: 64, r: 14, t: 46, b: 96 }, height: 420,
           xaxis: { type: "log", title: { text: xtitle, standoff: 4 }, gridcolor: "#eee", dtick: 1 },
           yaxis: { type: "log", title: { text: ytitle }, gridcolor: "#eee", dtick: 1 },
           legend: { orientation: "h", x: 0, y: -0.2, yanchor: "top", font: { size: 10 } },
           paper_bgcolor: "#fff", plot_bgcolor: "#fff", ...extra };
}

const PLOT_CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };

function column(points, name, j) {
  return points[name] == null ? null : points[name].map((r) => r[j]);
}

function floorAt(sweep, key, k) {  // the cost floor at the k-th context; a value that does not apply is absent
  const rec = sweep.by_context[k];
  return rec[key === "usd_per_mtok" ? "cost_floor_usd_per_mtok" : "cost_floor_chip_hours_per_mtok"] ?? null;
}

function renderPlots(serve, sweep, fast, fr, c) {
  const P = sweep.points;
  const j = 0;  // the chosen context is the first of the sweep's contexts
  const B = P.batch;
  const fits = P.fits.map((r) => r[j]);
  const cost = costOf(P);
  const Bs = sweep.optimal_batch;
  const here = { x: [serve.batch], mode: "markers", name: `B = ${serve.batch}`,
                 marker: { size: 11, color: COLORS.orange, line: { color: "#fff", width: 1.5 } } };

  // latency per token vs batch
  const lat = column(P, "step_time_s", j).map((t) => t * 1e3);
  Plotly.react("plot-latency", [
    ...fitSplit(B, lat, fits, `decode step, context ${sweep.context} tok`, COLORS.blue),
    { ...here, y: [serve.decode.step_time_s * 1e3] },
  ], layout(`Latency per output token vs batch (context ${sweep.context} tok)`, "batch B (sequences per step)",
            "decode step time (ms)", { shapes: [vline(Bs, COLORS.orange)],
            annotations: [note(Bs, `B* = ${sweep.explain.optimal_batch.value}`, COLORS.orange, 0.95)] }), PLOT_CONFIG);

  // cost vs batch, with the floor and the memory limit
  const cb = column(P, cost.key, j);
  const floor = floorAt(sweep, cost.key, j);
  const shapes = [vline(Bs, COLORS.orange)];
  const notes = [note(Bs, `B* = ${sweep.explain.optimal_batch.value}`, COLORS.orange, 0.95)];
  const Bm = sweep.memory_batch_limit;
  if (Bm != null && Bm < B[B.length - 1]) {
    shapes.push({ type: "rect", xref: "x", yref: "paper", x0: Math.max(Bm, B[0]), x1: B[B.length - 1], y0: 0, y1: 1,
                  fillcolor: COLORS.red, opacity: 0.07, line: { width: 0 } });
    notes.push(note(Math.max(Bm, B[0]), "weights + KV exceed HBM", COLORS.red, 0.08));
  }
  if (sweep.balance_batch != null && sweep.balance_batch <= 4 * B[B.length - 1]) {
    shapes.push(vline(sweep.balance_batch, COLORS.green, "dash"));
    notes.push(note(sweep.balance_batch, `B_bal = ${sweep.explain.balance_batch.value}`, COLORS.green, 0.8));
  }
  Plotly.react("plot-cost", [
    ...fitSplit(B, cb, fits, "roofline cost", COLORS.blue),
    { x: [B[0], B[B.length - 1]], y: [floor, floor], mode: "lines", name: "floor c_min (B → ∞)",
      line: { color: COLORS.grey, dash: "dash", width: 1.3 } },
    ...(cost.key === "usd_per_mtok" ? [{ ...here, y: [serve.decode.usd_per_mtok] }] : []),
  ], layout(`Cost vs batch: a hyperbola on a floor (c(1)/c_min = ${sweep.explain.c1_over_cmin.value})`,
            "batch B (sequences per step)", cost.label, { shapes, annotations: notes }), PLOT_CONFIG);

  // cost vs context at a few batches, with L*
  const order = P.context.map((s, k) => k).filter((k) => k > 0).sort((a, b) => P.context[a] - P.context[b]);
  const S = order.map((k) => P.context[k]);
  const picks = [];
  for (const want of [16, 256, Bs, 8 * Bs]) {
    let best = 0;
    B.forEach((b, i) => { if (Math.abs(Math.log(b / want)) < Math.abs(Math.log(B[best] / want))) best = i; });
    if (!picks.includes(best)) picks.push(best);
  }
  const palette = [COLORS.purple, COLORS.blue, COLORS.orange, COLORS.green];
  const traces = [];
  picks.forEach((i, n) => traces.push(...fitSplit(S, order.map((k) => P[cost.key][i][k]), order.map((k) => P.fits[i][k]),
    `B = ${B[i].toLocaleString("en-US")}`, palette[n], 2.0)));
  traces.push({ x: S, y: order.map((k) => floorAt(sweep, cost.key, k)), mode: "lines", name: "floor c_min(S)",
                line: { color: COLORS.grey, dash: "dash", width: 1.4 } });
  const cshapes = [];
  const cnotes = [];
  const Ls = sweep.kv_crossover_context;
  if (Ls && Ls >= S[0] && Ls <= S[S.length - 1]) {
    cshapes.push(vline(Ls, COLORS.red));
    cnotes.push(note(Ls, `L* = ${sweep.explain.kv_crossover_context.value}`, COLORS.red, 0.95));
  }
  const Lr = sweep.kv_crossover_context_roofline;
  if (Lr && Lr >= S[0] && Lr <= S[S.length - 1]) {
    cshapes.push(vline(Lr, COLORS.red, "dashdot"));
    cnotes.push(note(Lr, "with attention FLOP", COLORS.red, 0.85));
  }
  Plotly.react("plot-context", traces, layout("Cost vs context: past L* the KV reads set the floor",
    "context S (tokens of KV per sequence)", cost.label, { shapes: cshapes, annotations: cnotes }), PLOT_CONFIG);

  renderFrontier(fr);

  // the latency–cost frontier with the standard and fast-mode points
  const F = fast.frontier;
  const fc = costOf(F);
  const ft = [{ x: F.step_time_s.map((t) => t * 1e3), y: F[fc.key], mode: "lines+markers", name: "Pareto frontier",
                line: { color: COLORS.blue, width: 2.4 }, marker: { size: 4 },
                customdata: F.batch, hovertemplate: "B = %{customdata:,.0f}<br>%{x:.3s} ms, %{y:.3s}<extra></extra>" }];
  for (const [key, color, label] of [["standard", COLORS.green, "standard"], ["fast", COLORS.red, "fast mode"]]) {
    const pt = fastPoint(fast, key);
    if (!pt) continue;
    ft.push({ x: [pt.step_time_s * 1e3], y: [pt[fc.key]], mode: "markers+text", name: `${label}: B = ` +
              Math.round(pt.batch).toLocaleString("en-US"), text: [label], textposition: "top right",
              textfont: { color, size: 12 }, cliponaxis: false,
              marker: { size: 13, color, line: { color: "#fff", width: 1.5 } } });
  }
  const lf = layout(`The lecture's latency–cost frontier: one decode step at context ${fast.context} tok`,
    "latency per output token = decode step (ms)", fc.label);
  lf.xaxis.tickvals = logTicks(Math.min(...ft[0].x), Math.max(...ft[0].x));  // about one decade: 1, 2, 5 per decade
  lf.xaxis.dtick = undefined;
  Plotly.react("plot-fastmode", ft, lf, PLOT_CONFIG);
}

function renderFrontier(fr) {
  // tokens/s per chip against tokens/s per user over concurrency (tokenmath frontier), with its answer
  const title = fr.error ? "Throughput vs speed under load: no frontier" : `Under load: tokens/s per chip vs per user ` +
    `(ISL ${count(fr.isl)} / OSL ${count(fr.osl)})`;
  const lf = layout(title, "tokens/s per user = 1 / TPOT", "tokens/s per chip");
  lf.xaxis = { ...lf.xaxis, type: "linear", dtick: undefined };
  if (fr.error) {
    lf.annotations = [{ x: 0.5, y: 0.5, xref: "paper", yref: "paper", text: fr.error, showarrow: false,
                        font: { color: COLORS.red } }];
    Plotly.react("plot-frontier", [], lf, PLOT_CONFIG);
    return;
  }
  const P = fr.points;
  const traces = [{ x: P.map((p) => p.tokens_per_s_per_user), y: P.map((p) => p.tokens_per_s_per_chip),
    mode: "lines+markers", name: `Pareto frontier over concurrency (${fr.method})`, line: { color: COLORS.blue, width: 2.4 },
    marker: { size: 5 }, customdata: P.map((p) => [p.concurrency, p.ttft_s * 1e3, p.tpot_s * 1e3, p.chips, p.layout]),
    hovertemplate: "concurrency %{customdata[0]:,} on %{customdata[3]} chips %{customdata[4]}<br>%{x:.3s} tok/s per " +
      "user, %{y:.3s} tok/s per chip<br>TTFT %{customdata[1]:.3s} ms, TPOT %{customdata[2]:.3s} ms<extra></extra>" }];
  const shapes = [];
  const notes = [];
  const at = fr.at;
  if (at) {
    const v = at.asked.user_speed;
    shapes.push({ type: "line", xref: "x", yref: "paper", x0: v, x1: v, y0: 0, y1: 1,
                  line: { color: COLORS.grey, width: 1.3, dash: "dash" } });
    notes.push({ x: v, y: 0.04, xref: "x", yref: "paper", text: `${fr.target}: ${sig(v)} tok/s per user`,
                 showarrow: false, xanchor: "left", font: { color: COLORS.grey, size: 11 },
                 bgcolor: "rgba(255,255,255,0.85)" });
  }
  if (at && at.met) {
    traces.push({ x: [at.tokens_per_s_per_user], y: [at.tokens_per_s_per_chip], mode: "markers+text",
                  name: `best at ${fr.target}: concurrency ${count(at.concurrency)}`, text: [`at ${fr.target}`],
                  textposition: "top right", textfont: { color: COLORS.orange, size: 12 }, cliponaxis: false,
                  marker: { size: 13, color: COLORS.orange, line: { color: "#fff", width: 1.5 } } });
    if (at.simulated) {
      traces.push({ x: [at.simulated.tokens_per_s_per_user], y: [at.simulated.tokens_per_s_per_chip], mode: "markers",
                    name: `simulated there (${count(at.simulated.requests)} requests)`,
                    marker: { size: 15, color: "rgba(0,0,0,0)", line: { color: COLORS.red, width: 2 } } });
    }
  }
  const ys = traces[0].y;
  lf.yaxis.tickvals = logTicks(Math.min(...ys), Math.max(...ys));
  lf.yaxis.dtick = undefined;
  lf.shapes = shapes;
  lf.annotations = notes;
  Plotly.react("plot-frontier", traces, lf, PLOT_CONFIG);
}

function render(serve, sweep, fast, fr, c) {
  renderNumbers(serve, sweep, fast, fr);
  renderPlots(serve, sweep, fast, fr, c);
  renders += 1;
  document.body.dataset.renders = String(renders);
  document.body.dataset.state = "ready";
}

// ---- start-up: choices from the catalog, state from the URL, upload ---------------------------

function fill(select, values, labels = {}) {
  select.replaceChildren(...values.map((v) => {
    const o = document.createElement("option");
    o.value = v;
    o.textContent = labels[v] || v || "model's own";
    return o;
  }));
}

async function upload(file) {
  setStatus(`reading ${file.name}…`);
  const r = await fetch("/api/models", { method: "POST", headers: { "content-type": "application/json" },
                                         body: await file.text() });
  const body = await r.json();
  if (!r.ok) { setStatus(`${file.name}: ${body.error}`, "error"); return; }
  const sel = $("model");
  if (![...sel.options].some((o) => o.value === body.model)) {
    const o = document.createElement("option");
    o.value = body.model;
    o.textContent = `${body.display_name || body.model} (uploaded)`;
    sel.prepend(o);
  }
  sel.value = body.model;
  refresh();
}

async function start() {
  const [cat, opts] = await Promise.all([api("catalog/list", {}), fetch("/api/options").then((r) => r.json())]);
  fill($("model"), [...opts.uploads, ...cat.models]);
  fill($("on"), [...cat.systems, ...cat.hardware]);
  fill($("precision"), ["", ...opts.precisions]);
  fill($("basis"), opts.bases);
  fill($("engine"), ["", ...opts.engines], { "": "engines' median" });
  const state = { ...DEFAULTS, ...Object.fromEntries(new URLSearchParams(location.hash.slice(1))) };
  for (const el of $("controls").elements) if (el.name && state[el.name] !== undefined) el.value = state[el.name];
  let timer = null;
  $("controls").addEventListener("input", (e) => {
    if (e.target.id === "upload") return;
    clearTimeout(timer);
    timer = setTimeout(refresh, 250);
  });
  $("controls").addEventListener("submit", (e) => e.preventDefault());
  $("upload").addEventListener("change", (e) => { if (e.target.files[0]) upload(e.target.files[0]); });
  await refresh();
}

start().catch((e) => { setStatus(e.message, "error"); document.body.dataset.state = "error"; });
