"""Write the lecture report as HTML (self-contained: inline CSS, pictures embedded), Markdown or text.

Every number printed here was computed by a claim (`tokenmath.lecture`) and formatted by
`units.fmt`; this module only lays them out.
"""

from __future__ import annotations

import base64
import html
import textwrap
from collections import Counter
from pathlib import Path

from ..lecture import SECTIONS, SeedError
from ..lecture.claim import IDENTITY, NOT_COMPUTABLE, OFF, REPRODUCED, VERDICTS, WRONG, Claim

__all__ = ["write_report", "FORMATS", "value_text", "FILE_NAMES"]

FORMATS = ("html", "md", "text")
FILE_NAMES = {"html": "index.html", "md": "report.md", "text": "report.txt"}


def value_text(c: Claim) -> str:
    return c.printed()


def _by_section(claims: list[Claim]) -> dict[str, list[Claim]]:
    out: dict[str, list[Claim]] = {k: [] for k in SECTIONS}
    for c in claims:
        out.setdefault(c.section, []).append(c)
    return {k: v for k, v in out.items() if v}


def _picture_home(claims: list[Claim], pictures: dict) -> dict[str, str]:
    """Each picture is shown in the section of the first claim that refers to it."""
    home: dict[str, str] = {}
    for c in claims:
        for p in c.plots:
            if p in pictures:
                home.setdefault(p, c.section)
    for p in pictures:
        home.setdefault(p, "")
    return home


SEEDS_TITLE = "Where the summaries are wrong"
SEEDS_INTRO = ("The five seed summaries of the lecture (files 000–004, lecture-claims.md §0) repeat, garble or add "
               "errors. Each row: the seed, the claim that checks it, what the seed says, and the corrected statement "
               "with the tool's number.")
_CHECK_NONE = "none: nothing to compare (see the note)"


def write_report(claims: list[Claim], pictures: dict, out: Path, form: str, meta: dict,
                 seeds: list[SeedError] | None = None) -> Path:
    """Write the report in `form` into `out`; returns the file written."""
    if form not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)} (got {form!r})")
    out.mkdir(parents=True, exist_ok=True)
    meta = {**meta, "seeds": list(seeds or [])}
    text = {"html": _html, "md": _markdown, "text": _text}[form](claims, pictures, out, meta)
    path = out / FILE_NAMES[form]
    path.write_text(text, encoding="utf-8")
    return path


def _counts(claims: list[Claim]) -> Counter:
    return Counter(c.verdict for c in claims)


# ---- Markdown ------------------------------------------------------------------------------------

def _markdown(claims, pictures, out, meta) -> str:
    n = _counts(claims)
    home = _picture_home(claims, pictures)
    lines = [f"# {meta['title']}", "", meta["intro"], "",
             "**Verdicts:** " + " · ".join(f"{v}: {n.get(v, 0)}" for v in VERDICTS), ""]
    if meta.get("settings"):
        lines += ["**Catalog overrides (`--set`):** " + ", ".join(f"`{s}`" for s in meta["settings"]), ""]
    lines += ["| id | claim | lecture | tool | verdict |", "|---|---|---|---|---|"]
    for c in claims:
        lines.append(f"| [{c.id}](#{c.id.lower()}) | {_md_cell(c.statement)} | {_md_cell(c.said)} | "
                     f"{_md_cell(value_text(c))} | {c.verdict} |")
    for key, group in _by_section(claims).items():
        lines += ["", f"## {SECTIONS.get(key, key)}", ""]
        for name, pic in pictures.items():
            if home.get(name) == key and "file" in pic:
                lines += [f"![{pic['caption']}]({pic['file']})", f"*{pic['caption']}*", ""]
        for c in group:
            lines += [f"### {c.id}", "", f"**Said** ({c.at or 'ledger'}): {c.statement}", "",
                      f"- lecture's number: {c.said}", f"- tool: **{value_text(c)}**",
                      f"- verdict: **{c.verdict}** — {c.note}", f"- check: {c.check or _CHECK_NONE}", ""]
            if c.derivation:
                lines += ["```", c.derivation, "```", ""]
    if meta["seeds"]:
        lines += ["", f"## {SEEDS_TITLE}", "", SEEDS_INTRO, "", "| seed | claim | the seed says | correction |",
                  "|---|---|---|---|"]
        lines += [f"| {e.seed} | [{e.claim}](#{e.claim.lower()}) | {_md_cell(e.says)} | {_md_cell(e.correction)} |"
                  for e in meta["seeds"]]
    missing = [(k, p["missing"]) for k, p in pictures.items() if "missing" in p]
    if missing:
        lines += ["## Pictures not drawn", ""] + [f"- {k}: {r}" for k, r in missing]
    lines += ["", meta["footer"], ""]
    return "\n".join(lines)


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


# ---- plain text ----------------------------------------------------------------------------------

def _text(claims, pictures, out, meta) -> str:
    n = _counts(claims)
    w = textwrap.TextWrapper(width=100, subsequent_indent="    ")
    lines = [meta["title"], "=" * min(100, len(meta["title"])), "", *textwrap.wrap(meta["intro"], 100), "",
             "Verdicts: " + ", ".join(f"{v} {n.get(v, 0)}" for v in VERDICTS)]
    if meta.get("settings"):
        lines.append("Overrides: " + ", ".join(meta["settings"]))
    for key, group in _by_section(claims).items():
        title = SECTIONS.get(key, key)
        lines += ["", title, "-" * len(title)]
        for c in group:
            lines += ["", f"{c.id}  [{c.verdict}]  tool: {value_text(c)}   lecture: {c.said}"]
            lines += w.wrap("  said: " + c.statement) + w.wrap("  " + c.note)
            lines += w.wrap("  check: " + (c.check or _CHECK_NONE))
            if c.derivation:
                lines += ["    " + ln for ln in c.derivation.splitlines()]
    if meta["seeds"]:
        lines += ["", SEEDS_TITLE, "-" * len(SEEDS_TITLE), *textwrap.wrap(SEEDS_INTRO, 100)]
        for e in meta["seeds"]:
            lines += [""] + w.wrap(f"seed {e.seed} [{e.claim}] says: {e.says}") + w.wrap(f"  correction: {e.correction}")
    lines += ["", "Pictures:"]
    for k, p in pictures.items():
        lines.append(f"  {k}: {p['file'] if 'file' in p else 'not drawn — ' + p['missing']}")
    lines += ["", meta["footer"], ""]
    return "\n".join(lines)


# ---- HTML ----------------------------------------------------------------------------------------

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:24px 28px 60px;background:#fff}
h1{font-size:26px;margin:8px 0 4px}h2{margin-top:42px;border-bottom:2px solid #e3e6ec;padding-bottom:4px}
.intro{color:#4a5262}.counts span{display:inline-block;margin:4px 10px 4px 0;padding:3px 10px;border-radius:12px}
table.index{border-collapse:collapse;width:100%;font-size:13.5px}
table.index td,table.index th{border-bottom:1px solid #e8eaef;padding:5px 6px;text-align:left;vertical-align:top}
table.index td.num{font-variant-numeric:tabular-nums;width:15%}table.index td:nth-child(2){width:48%}
.v{white-space:nowrap;border-radius:10px;padding:1px 8px;font-size:12.5px;font-weight:600}
.reproduced{background:#dff3e4;color:#1d6b33}.identity{background:#e3ecfb;color:#23467e}.off{background:#fff1d6;color:#8a5a00}
.wrong{background:#fde0e0;color:#9b1c1c}.nc{background:#eceef2;color:#555d6b}
.claim{border:1px solid #e3e6ec;border-radius:8px;padding:10px 16px;margin:14px 0}
.claim h3{margin:2px 0 6px;font-size:17px}.said{color:#4a5262}.tool{font-size:16px}
details pre{background:#f3f4f7;padding:10px;overflow-x:auto;font-size:12.5px;line-height:1.35}
figure{margin:18px 0}figure img{max-width:100%;border:1px solid #e3e6ec}figcaption{color:#4a5262;font-size:13.5px}
.missing{color:#8a5a00;font-size:13.5px}footer{margin-top:40px;color:#6b7383;font-size:13px}
.check{color:#3d4554;font-size:13.5px;background:#f7f8fa;border-left:3px solid #c9cfda;padding:4px 10px;margin:6px 0}
table.seeds{border-collapse:collapse;width:100%;font-size:13.5px}
table.seeds td,table.seeds th{border-bottom:1px solid #e8eaef;padding:5px 6px;text-align:left;vertical-align:top}
"""

_CLASS = {REPRODUCED: "reproduced", IDENTITY: "identity", OFF: "off", WRONG: "wrong", NOT_COMPUTABLE: "nc"}


def _badge(verdict: str) -> str:
    return f'<span class="v {_CLASS.get(verdict, "nc")}">{html.escape(verdict)}</span>'


def _img(out: Path, pic: dict) -> str:
    data = base64.b64encode((out / pic["file"]).read_bytes()).decode("ascii")
    cap = html.escape(pic["caption"])
    return (f'<figure><img alt="{cap}" src="data:image/png;base64,{data}">'
            f'<figcaption>{cap} <a href="{html.escape(pic["file"])}">(PNG)</a></figcaption></figure>')


def _html(claims, pictures, out, meta) -> str:
    e = html.escape
    n = _counts(claims)
    home = _picture_home(claims, pictures)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{e(meta['title'])}</title>"
             f"<meta name='viewport' content='width=device-width,initial-scale=1'><style>{_CSS}</style></head><body><main>",
             f"<h1>{e(meta['title'])}</h1><p class='intro'>{e(meta['intro'])}</p>",
             "<p class='counts'>" + "".join(f"<span class='{_CLASS[v]}'>{e(v)}: {n.get(v, 0)}</span>" for v in VERDICTS)
             + "</p>"]
    if meta.get("settings"):
        parts.append("<p><b>Catalog overrides (--set):</b> " + ", ".join(f"<code>{e(s)}</code>" for s in meta["settings"])
                     + "</p>")
    parts.append("<table class='index'><tr><th>id</th><th>claim</th><th>lecture</th><th>tool</th><th>verdict</th></tr>")
    for c in claims:
        parts.append(f"<tr><td><a href='#{c.id}'>{c.id}</a></td><td>{e(c.statement)}</td><td class='num'>{e(c.said)}</td>"
                     f"<td class='num'>{e(value_text(c))}</td><td>{_badge(c.verdict)}</td></tr>")
    parts.append("</table>")
    for key, group in _by_section(claims).items():
        parts.append(f"<section><h2>{e(SECTIONS.get(key, key))}</h2>")
        for name, pic in pictures.items():
            if home.get(name) == key and "file" in pic:
                parts.append(_img(out, pic))
        for c in group:
            deriv = f"<details><summary>derivation</summary><pre>{e(c.derivation)}</pre></details>" if c.derivation else ""
            parts.append(
                f"<div class='claim' id='{c.id}'><h3>{c.id} {_badge(c.verdict)}</h3>"
                f"<div class='said'><b>Said</b> ({e(c.at or 'ledger')}): {e(c.statement)}</div>"
                f"<div class='tool'>lecture: <b>{e(c.said)}</b> · tool: <b>{e(value_text(c))}</b></div>"
                f"<p>{e(c.note)}</p><p class='check'><b>Check:</b> {e(c.check or _CHECK_NONE)}</p>{deriv}</div>")
        parts.append("</section>")
    if meta["seeds"]:
        parts.append(f"<section id='seeds'><h2>{e(SEEDS_TITLE)}</h2><p class='intro'>{e(SEEDS_INTRO)}</p>"
                     "<table class='seeds'><tr><th>seed</th><th>claim</th><th>the seed says</th><th>correction</th></tr>")
        parts += [f"<tr><td>{e(x.seed)}</td><td><a href='#{e(x.claim)}'>{e(x.claim)}</a></td><td>{e(x.says)}</td>"
                  f"<td>{e(x.correction)}</td></tr>" for x in meta["seeds"]]
        parts.append("</table></section>")
    missing = [(k, p["missing"]) for k, p in pictures.items() if "missing" in p]
    if missing:
        parts.append("<h2>Pictures not drawn</h2><ul class='missing'>" +
                     "".join(f"<li>{e(k)}: {e(r)}</li>" for k, r in missing) + "</ul>")
    parts.append(f"<footer>{e(meta['footer'])}</footer></main></body></html>")
    return "\n".join(parts)
