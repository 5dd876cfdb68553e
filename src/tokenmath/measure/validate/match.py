"""Table strings -> catalog records: a scored name matcher, with the alias table's rules as named aliases.

A string such as "Qwen3-235B-A22B-Instruct-2507 (FP8)" or "TPU v4 (275 TFLOP/s bf16, 32 GiB HBM ...)" is
matched against every candidate's names: catalog name, display name, the extra names of
`catalog/aliases/names.yaml` (DeepSeek-R1 is DeepSeek-V3's architecture...), and the fallback models
beside the alias table. Both sides are cut into tokens (lower case, split at anything but letters, digits
and a decimal point; a word followed by a number also counts joined: "Gaudi 3" -> gaudi3; in model names a
string's family word glued to its generation also counts apart: "Llama2-70B" -> llama 2 70b). A candidate
name scores the weighted share of its tokens found in the string:

    score = Σ_{t ∈ name ∩ string} w(t) / Σ_{t ∈ name} w(t),   w = 3 for tokens with a digit (model numbers,
            sizes, versions), 2 for words, 0.25 for vendor and packaging words (nvidia, sxm, instruct...)

and is refused outright when the string carries a different token of the same shape (digits replaced
by #: "h100" vs "h200", "70b" vs "8b", "3.1" vs "3.3", "gaudi2" vs "gaudi3"), or a word naming a smaller
sibling that the name lacks ("GLM-4.5-Air" is not GLM-4.5; air, mini, lite, flash, scout...), or a larger one
("Command R+" or "Command R Plus" is not Command R: a '+' closing a word reads as plus). A model name is also
refused where the string puts a bare number the name lacks right after one of the name's words: another
generation of the family ("OLMo 2 7B" is not OLMo 7B, "Falcon 3 7B" not Falcon-7B, "Command R 08-2024" not
Command R v01; "Llama 3" for a name's 3.1 is not refused, it earns half credit as below). A PCIe card is a
different part from its SXM sibling (fewer SMs or lower clocks, another power limit): a name saying PCIe needs the
string to say it, a string saying PCIe refuses a name saying SXM, and counts against a name silent about the form
(so "H100 PCIe" is the PCIe part, "H100" the SXM one, "L40S PCIe" still the L40S). The best candidate at or
above MIN_SCORE wins ("Llama 4 Scout" does not reach it for Llama 4 Maverick: 5 of 7); what matched, with
its score, is reported beside every row. A rule of the alias table (a regular expression for a string
no name covers, e.g. SM90 -> the H800 node, or one that needs a note) wins where it matches, as score 1. Nothing
here is keyed to a row id.

Hardware matches a chip or a system; a chip becomes the best-scoring system built of it (ties: the
smallest scale-up domain). A GPU bin the string names ('60-core GPU', '30c') against a part whose display name
states another is refused (Apple's bins differ in compute and sometimes bandwidth), and a Mac's 'Pro' is the
computer's ('MacBook Pro M4' is no M4 Pro). A scale-out fabric named in the string (InfiniBand NDR, ConnectX-7, RoCE,
EFA...) is reported, and an explicit per-GPU rate beside it ("CX7 IB 400 Gb/s") sets the system's
scale-out rate.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache

from ...core.errors import CatalogError
from ...core.load import (_load_cached, _other_names, catalog_dirs, load_alias_model, load_aliases, load_chip, load_model,
                          load_system, names)
from ...core.records import Model, System
from .rows import NVL36X2

__all__ = ["Aliases", "Match", "score_name", "tokens", "box_chips", "MIN_SCORE"]

MIN_SCORE = 0.8
_WEAK = {"nvidia", "amd", "google", "intel", "aws", "hgx", "dgx", "sxm", "sxm4", "sxm5", "pcie", "instinct",
         "instruct", "chat", "base", "hf", "it", "the", "gpu", "gpus", "per", "x", "of", "and", "with",
         "oam", "board", "node", "nodes", "pod", "slice", "platform", "total", "active", "b", "params"}
# (the weights are a name's: a lone 'a' there is a model's letter, Command A's, as strong as Command R's 'r')
# words that name a smaller (or, plus, a larger) sibling of a model or chip: present in the string but not in the
# name, they refuse it
_VARIANT = {"air", "mini", "lite", "flash", "nano", "small", "tiny", "scout", "micro", "medium", "distill", "plus",
            "embed"}  # 'embed': an encoder named after its family's decoder ('snowflake-arctic-embed-m' is no Arctic)
# a part's tier within its name (Cloud AI 100 Standard / Pro / Ultra, M3 Max / Ultra): a chip name with one refuses a
# string naming another and not its own ('Cloud AI 100 Standard' is no 'Cloud AI 100 Ultra'); a name without one
# (an Azure 'Standard_ND96isr_H100_v5' against 'H100 SXM') is not affected
_TIER = {"standard", "pro", "max", "ultra"}
_SXM = ("sxm", "sxm4", "sxm5")
_ACTIVE = re.compile(r"a[0-9]+(?:\.[0-9]+)?b")  # a mixture-of-experts name's active size: the 'A22B' of Qwen3-235B-A22B
# words naming a token mixer with a recurrent state: a string saying one is no attention-only entry ('Falcon-Mamba-7B')
_RECURRENT = {"mamba", "mamba2", "rwkv", "ssm", "xlstm"}


def tokens(text: str, split_family: bool = False) -> list[str]:
    """Lower-case tokens: letters/digits runs, keeping a decimal point between digits ("3.1").
    `split_family` (model names): a family word glued to its generation is two tokens, "Llama2-70B" as
    "Llama 2 70B", "Qwen2.5" as "Qwen 2.5", "Llama3.1" as "Llama 3.1" (two letters or more, so sizes and
    parts such as "a22b" stay whole)."""
    t = text.lower().replace("×", "x")
    t = re.sub(r"(?<![a-z0-9])(\d+)\s*x(?=[a-z])", r"\1 x ", t)  # a count glued to the part: "8xH200", "4xa100"
    t = re.sub(r"(?<=[a-z0-9])\+(?![a-z0-9])", " plus ", t)  # a '+' closing a word names the larger sibling: "R+"
    t = re.sub(r"(?<![0-9])\.|\.(?![0-9])", " ", t)  # a point only between digits
    # a decimal size keeps its unit ('3.8b', '0.5b'): split, its number would read as a version of the name's
    word = r"[a-z0-9]+(?:\.[0-9]+(?:[bm](?![a-z0-9]))?)?"
    # a version glued to a letter names another model of the family: 'GLM-4.5V' (a vision model) is not 'GLM-4.5'
    out = re.findall((r"[0-9]+\.[0-9]+[a-z]+(?![a-z0-9.])|" if split_family else "") + word, t)
    if split_family:
        glued = [re.fullmatch(r"([a-z]{2,})([0-9]+(?:\.[0-9]+)?)", w) for w in out]
        out = [p for w, g in zip(out, glued) for p in (g.groups() if g else (w,))]
    return out


def _token_set(text: str, split_family: bool = False) -> set[str]:
    raw = tokens(text, split_family)
    out = set(raw)
    for a, b in zip(raw, raw[1:]):  # "gaudi 3" -> gaudi3, "tpu v4" keeps v4, "llama 4" -> llama4
        if a.isalpha() and b[0].isdigit():
            out.add(a + b)
        if split_family and a.isalpha() and re.fullmatch(r"v[0-9]+(?:\.[0-9]+)?", b):
            out.add(b[1:])  # a model's version written with a 'v': "Llama v3.1 8B" is Llama 3.1 8B
    return out


def _shape(t: str) -> str:
    return re.sub(r"[0-9]+(?:\.[0-9]+)?", "#", t)


def _weight(t: str) -> float:
    if t in _WEAK:
        return 0.25
    return 3.0 if any(c.isdigit() for c in t) else 2.0


# a generation after a family word: a bare number ('OLMo 2'), or a number and a letter glued either way that is no
# size ('Falcon-H1', 'Gemma-3n', 'GLM-Z1'; not '7B', '1.5M', '128K', '1T')
_GENERATION = r"[0-9]+(?:\.[0-9]+)?|[a-z][0-9]+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?[ac-jln-su-z]"


def _other_generation(want: list[str], text: str) -> bool:
    """True when the string puts a generation right after one of the name's words (packaging words aside) and the
    name has neither it, the two joined, nor a version it begins ("olmo 2" against OLMo-7B, "falcon h1" against
    Falcon-7B: another generation; "llama 3" against Llama-3.1 is not one)."""
    raw = tokens(text, split_family=True)
    for a, b in zip(raw, raw[1:]):
        if (a.isalpha() and a in want and a not in _WEAK and re.fullmatch(_GENERATION, b)
                and b not in want and a + b not in want and not any(w.startswith(b + ".") for w in want)
                and not (b[0] == "v" and b[1].isdigit() and (b[1:] in want or any(w.startswith(b[1:] + ".") for w in want)))):
            return True
    return False


def score_name(name: str, text: str, generations: bool = False) -> float:
    """How well a candidate name is found in a string: 0 (absent or contradicted) … 1 (every token present).
    `generations`: also refuse a string naming another generation of the name's family (model names)."""
    have = _token_set(text, split_family=generations)  # the string's glued 'Llama2' also as 'llama', '2' (and joined)
    want = tokens(name)
    if not want or (have & _VARIANT) - set(want):
        return 0.0
    # a model name's sibling word is part of the model: 'Phi-3-medium' is not any Phi-3, 'GLM-4.5-Air' not GLM 4.5
    if generations and (set(want) & _VARIANT) - have:
        return 0.0
    if generations and _other_generation(want, text):
        return 0.0
    if not generations and set(want) & _TIER and not set(want) & _TIER & have and have & _TIER:
        return 0.0  # another tier of the part: 'Cloud AI 100 Standard' is not the Ultra
    if ("pcie" in want) != ("pcie" in have) and ("pcie" in want or any(t in want for t in _SXM)):
        return 0.0  # the other form factor: a PCIe card is not its SXM sibling
    total = got = 0.0
    if "pcie" in have and "pcie" not in want:
        total += _weight("pcie")  # the string's form, absent from the name
    for t in dict.fromkeys(want):
        w = _weight(t)
        if generations and _ACTIVE.fullmatch(t) and not any(_ACTIVE.fullmatch(h) for h in have) and any(
                re.fullmatch(r"[0-9]+(?:\.[0-9]+)?b", u) and u in have for u in want):
            w = _weight("active")  # 'Qwen3 235B' names Qwen3-235B-A22B by its total; a string's other 'A3B' refuses
        total += w
        if t in have:
            got += w
            continue
        if any(c.isdigit() for c in t):
            same = [h for h in have if _shape(h) == _shape(t) and h != t]
            if any(t.startswith(h + ".") for h in same):  # "llama 3" for "3.1": half the credit, no conflict
                got += w / 2
            elif same:
                return 0.0  # a different model number, size or version of the same shape
    return got / total


@dataclass(frozen=True)
class Match:
    """What a table string matched: the catalog entry, its score, and through which name."""

    text: str
    entry: str
    score: float
    via: str
    key: str = ""  # the name that matched

    def note(self) -> str:
        return f"{self.text!r} matched {self.entry} (score {self.score:.2f}, via {self.via})"

    def to_dict(self) -> dict:
        return {"text": self.text, "entry": self.entry, "score": round(self.score, 3), "via": self.via}


def _said(key: str, text: str, generations: bool = False) -> float:
    """The weight of the string's own tokens that a name holds: how much of what the string says the name accounts
    for ('NVIDIA A100 40GB': 'A100 40GB' holds the a100 and the 40gb, 'NVIDIA A100' the a100 and a vendor word).
    Words only inside brackets gloss the name before them and count half ('Trn2 UltraServer (4x trn2.48xlarge)' is
    the UltraServer, its instances in brackets)."""
    want = set(tokens(key))
    named = set(tokens(re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", text), split_family=generations))
    return sum(_weight(t) * (1.0 if t in named else 0.5)
               for t in dict.fromkeys(tokens(text, split_family=generations)) if t in want)


def _best(text: str, candidates: dict[str, list[tuple[str, str]]], generations: bool = False) -> Match | None:
    """The best-scoring name; on a tie the name that holds more of the string's own words and numbers, then the
    longer name, the more specific ("V100 16GB" over "V100"; for "NVIDIA A100 40GB", "A100 40GB" over "NVIDIA A100",
    both wholly found in it)."""
    best: Match | None = None
    best_key, best_said = "", 0.0
    for entry, keys in candidates.items():
        for key, how in keys:
            s = score_name(key, text, generations)
            if s < MIN_SCORE:
                continue
            said = _said(key, text, generations)
            if best is None or s > best.score + 1e-9 or (abs(s - best.score) <= 1e-9 and (
                    said > best_said + 1e-9 or (abs(said - best_said) <= 1e-9 and len(key) > len(best_key)))):
                best, best_key, best_said = Match(text, entry, s, f"{how} {key!r}", key), key, said
    return best


def _overlap(name: str, text: str) -> float:
    """The weighted share of a name's words and sizes the string holds, nothing refused (a near miss, for a hint); a
    model number of the same family and shape counts half ('MI350X' is kin to MI355X and MI300X, 'H20' to H200 not)."""
    want, have = tokens(name), _token_set(text, split_family=True)
    total = sum(_weight(t) for t in dict.fromkeys(want))
    shared = [t for t in dict.fromkeys(want) if t in have and t not in _WEAK and not re.fullmatch(r"[0-9.]+", t)]
    def near(t: str, h: str) -> float:  # 1 for the same number, less the further apart ('MI350X': MI355X before MI300X)
        a, b = (float(re.search(r"[0-9]+(?:\.[0-9]+)?", x).group(0)) for x in (t, h))
        return 1 - abs(a - b) / max(a, b, 1e-9)
    kin = [max((near(t, h) for h in have if re.match(r"[a-z]+[0-9]", h) and _shape(h) == _shape(t)
                and re.match(r"[a-z]+", h).group(0) == re.match(r"[a-z]+", t).group(0)), default=0.0) * _weight(t) / 2
           for t in dict.fromkeys(want) if t not in have and re.match(r"[a-z]+[0-9]", t)]
    got = sum(_weight(t) for t in shared) + sum(kin)
    return got / total if total else 0.0  # (a bare '3' is no kinship)


def _nearest(text: str, candidates: dict[str, list[tuple[str, str]]], n: int = 3) -> str:
    """'; did you mean a, b?' for a string that matched nothing: the entries sharing the most of their names' words
    and numbers with it, '' where none shares any."""
    scored = sorted(((max(_overlap(k, text) for k, _ in keys), e) for e, keys in candidates.items()),
                    key=lambda x: (-x[0], x[1]))
    hint = [e for sc, e in scored if sc > 0][:n]
    return f"; did you mean {', '.join(hint)}?" if hint else ""


def _point_versions(text: str) -> str:
    """A version written without its point as providers' model ids write it: AWS Bedrock's 'meta.llama3-1-70b-instruct'
    (a hyphen between the family's generation and its minor version, before the size) is Llama 3.1 70B, not Llama 3;
    Fireworks' 'llama-v3p1-70b-instruct' ('p' for the point) is Llama v3.1."""
    t = re.sub(r"\b([A-Za-z]{2,}\d+)-(\d)-(?=\d+(?:\.\d+)?[bBmM]\b)", r"\1.\2-", text)
    return re.sub(r"\b([vV]\d+)p(\d+)\b", r"\1.\2", t)


class Aliases:
    """Table strings -> catalog records: a scored name matcher plus the rules of catalog/aliases/NAME.yaml."""

    def __init__(self, name: str = "validation"):
        self.data = load_aliases(name)
        self.file = self.data.get("file", name)
        self.engine = self.data.get("engine", {})
        self.datasets = self.data.get("datasets", {}) or {}
        self.matched: dict[str, dict] = {}  # what the current row's strings matched (reset per row by the caller)

    def source(self, path: str) -> str:
        src = self.data["sources"].get(path, self.data.get("source", ""))
        tag = " (estimate)" if path in self.data["estimates"] else ""
        return f"{self.file}: {src}{tag}"

    def _match(self, kind: str, text: str) -> dict | None:
        for rule in self.data.get(kind, []):
            if re.search(rule["pattern"], text, re.IGNORECASE):
                return rule
        return None

    def unsupported(self, row: dict) -> str | None:
        text = " | ".join(row.get(c, "") for c in ("model", "precision", "parallelism", "batch", "metric"))
        rule = self._match("unsupported", text)
        return rule["reason"] if rule else None

    def model(self, text: str) -> tuple[Model | None, str]:
        rule = self._match("models", text)
        m = _best(_point_versions(text), _model_candidates(), generations=True) if rule is None else \
            Match(text, rule["model"], 1.0, f"alias rule {rule['pattern']!r} in {self.file}")
        m = dataclasses.replace(m, text=text) if m is not None else None
        if m is None:
            return None, (f"model {text!r} matches no catalog model (best score below {MIN_SCORE}) nor alias rule"
                          + _nearest(text, _model_candidates()))
        rec = _model(m.entry)
        if rec is None:
            return None, f"model {m.entry!r} is neither in the catalog nor among the alias fallbacks"
        clash = (_size_clash(text, rec) or _mixer_clash(text, rec)) if rule is None else None
        if clash:
            return None, clash
        self.matched["model"] = m.to_dict()
        extra = (rule or {}).get("note", "") if rule is not None and rule["model"] == m.entry else ""
        return rec, "; ".join(x for x in (m.note(), extra) if x)

    def system(self, text: str) -> tuple[System | None, str]:
        rule = self._match("hardware", text)
        mig = _MIG.search(text)
        if rule is None and mig:
            return None, (f"hardware {text!r} is a MIG instance ({mig.group(0).strip()}): a share of a GPU's compute "
                          "slices and memory, while the catalog's parts are whole chips")
        # a host link or NIC named beside the part ('PCIe Gen5 host', 'ConnectX-7 PCIe') says nothing of its form
        part = re.sub(r"pci-?e\s*(?:gen\s*\d|\d\.0)\w*|(?:connectx|\bcx)-?\d\w*(?:\s*pci-?e)?", " ", text, flags=re.I)
        if re.search(r"pci-?e\s*(?:gen\s*\d|\d\.0)", text, re.I) and not re.search(
                r"\bsxm\d?|\b[dh]gx\b|\bhost\b|\bnics?\b|\bswitch|connectx|\bcx-?\d|,\s*pci-?e", text, re.I):
            part = re.sub(r"(?:gen\s*\d|\d\.0)\w*", " ", text, flags=re.I)  # 'H100 PCIe Gen5': the card's own link
        # 'NVL36x2' (also 'NVL36 × 2') is a product's name, two racks in one NVLink domain, not two of an NVL36 (an
        # upper X is kept out of the count rule below; names.yaml gives the name)
        part = NVL36X2.sub("NVL36X2", part)
        # counts and names glued to the part: 'H100x8', 'L40Sx4' (a count after it), 'RTX4090' (a name and its number)
        # (after a part's digit or capital, or 'l40sx4': not a word's own x, 'CloudMatrix384' is no 384 × 'CloudMatri')
        part = re.sub(r"(?:(?<=[0-9A-Z])|(?<=[0-9][a-z]))[x×*](?=\d+\s*$)|(?<=[A-Za-z0-9])[×*](?=\d+\s*$)", " x", part)
        part = re.sub(r"(?<=\d)(?=NVL\d)", " ", part, flags=re.I)  # 'GB200NVL72'
        part = re.sub(r"^\s*(\d+)\s*[x×*]\s*(\d+)\s*[x×*]\s*", r"\1 x \2 x ", part)  # '2x8xH100': nodes × chips
        part = re.sub(r"\b([A-Za-z]{2,})(\d{3,})\b", r"\1 \2", part)
        part = re.sub(r"\b(TPU)[_-]?(v\d)", r"\1 \2", part, flags=re.I)  # 'TPUv4', 'TPUv5e': the TPU v4, v5e
        part = re.sub(r"-(\d{2,3})G\b(?!\s*/\s*s)", r" \1GB", part)  # 'A100-40G': its memory
        # a Mac's 'Pro' is the computer's, not the chip's: 'MacBook Pro M4' is no M4 Pro
        part = re.sub(r"\b(Mac(?:Book)?)\s*Pro\b", r"\1", part, flags=re.I)
        m = _best(part, _system_candidates()) if rule is None else \
            Match(text, rule["system"], 1.0, f"alias rule {rule['pattern']!r} in {self.file}")
        if m is None and rule is None and re.search(r"(?<=\d)s\b|(?<=\d[A-Z])s\b", part):
            # a plural, 'two H100s', '8 MI300Xs' (tried after the string as written: 'L40s' is the L40S)
            m = _best(re.sub(r"(?<=\d)s\b|(?<=\d[A-Z])s\b", "", part), _system_candidates())
        extra = rule.get("note", "") if rule is not None else ""
        if m is None:
            return None, (f"hardware {text!r} matches no catalog chip or system (best score below {MIN_SCORE}) "
                          "nor alias rule" + _nearest(part, _system_candidates()))
        sysm = load_system(m.entry)
        size = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*GB\b(?!\s*/\s*s)|-(\d{2,3})G\b(?!\s*/\s*s)", text, re.I)
        have = sysm.chip.hbm_capacity_bytes / 2**30  # catalog capacities are nominal GB read in GiB
        gb = size and (size.group(1) or size.group(2))  # '80GB', or 'A100-40G'
        option = None
        # (a size the matched name itself carries is its name, not its memory: 'DGX A100 320GB', 'NVIDIA GH200 480GB')
        named_size = size is not None and bool(re.search(rf"(?<![\d.]){re.escape(gb)}\s*G", m.key, re.I))
        if rule is None and size and abs(float(gb) - have) > 0.15 * have and not named_size:
            # a part sold with several capacities at one bandwidth (a Mac's unified memory) is that part, with the size
            option = next((c for c in sysm.chip.memory_options_bytes if abs(float(gb) - c / 2**30) <= 0.15 * c / 2**30),
                          None)
            if option is None and sysm.chip.memory_configurable:  # a CPU's DIMMs: the stated size, over its sockets
                option = float(gb) * 2**30 / sysm.domain_chips
            if option is None:
                return None, (f"hardware {text!r} states {gb} GB of memory; the nearest catalog match, "
                              f"{sysm.chip.name}, has {have:.0f}: a different part")
            sysm = _with_capacity(sysm, option, f"{gb} GB stated by the row: " + (
                "the DIMMs a server CPU is configured with" if sysm.chip.memory_configurable else
                f"one of the part's memory options ({sysm.chip.source_of('memory_options_bytes')})"))
        # a form factor the string names against the part's: a PCIe or NVL card (H100 NVL, H200 NVL, H800 PCIe:
        # other memory, clocks and power) is not the SXM module, nor the other way round ('NVL72' is a rack)
        card = re.search(r"\bpcie\b|\bnvl\b", part, re.I)
        disp = sysm.chip.display_name
        if rule is None and ((card and "SXM" in disp) or (re.search(r"\bsxm\d?\b|\b[dh]gx\b", part, re.I) and
                                                          "PCIe" in disp)):
            what = card.group(0) if card and "SXM" in disp else "SXM"
            return None, (f"hardware {text!r} names a{'n' if what.upper() in ('NVL', 'SXM') else ''} "
                          f"{what if what != 'pcie' else 'PCIe'} part; the nearest catalog match, {sysm.chip.name} "
                          f"({disp}), is another form factor: a different part")
        # a consumer card's 'Ti' / 'Super' is another board (more SMs, faster memory, more power), and a 'D' after its
        # number ('RTX 4090 D') the China-market cut (fewer SMs): not the base card
        suffix = re.search(r"\b(ti|super)\b|(?<=\d{4}) ?(d)\b", part, re.I)
        word = suffix and (suffix.group(1) or suffix.group(2))
        if rule is None and suffix and not re.search(rf"\b{word}\b", disp, re.I):
            return None, (f"hardware {text!r} names the {word} board; the nearest catalog match, "
                          f"{sysm.chip.name} ({disp}), is the base card: a different part")
        # a GPU bin the string names ('60-core GPU', 'M3 Max 30c') against the part's: other compute, maybe bandwidth
        said, bin_ = _GPU_CORES.search(part), re.search(r"(\d+)-core GPU", disp)
        if rule is None and said and bin_ and said.group(1) != bin_.group(1):
            return None, (f"hardware {text!r} names a {said.group(1)}-core GPU; the nearest catalog match, "
                          f"{sysm.chip.name} ({disp}), has {bin_.group(1)}: a different part")
        # a model number the string states against another of the entry's names ('Jetson AGX Thor T4000': the name
        # it matched carries no number, the chip's display name says T5000); one beside the part's own number
        # ('H100 SXM (H200 same)') is a remark
        numbered = {t for k, _ in _system_candidates().get(m.entry, []) for t in tokens(k) if re.fullmatch(r"[a-z]+\d+", t)}
        said_nums = [h for h in tokens(part) if re.fullmatch(r"[a-z]+\d+", h)]
        other = next((h for h in said_nums if h not in numbered and any(_shape(h) == _shape(t) for t in numbered)
                      and not any(_shape(x) == _shape(h) and x in numbered for x in said_nums)), None)
        if rule is None and other:
            return None, (f"hardware {text!r} names {other.upper()}; the nearest catalog match, {sysm.chip.name} "
                          f"({disp}), is another model number: a different part")
        notes = [m.note(), extra]
        if option is not None:
            notes.append(f"{option / 2**30:.0f} GB a chip, as the string states (the part's memory is "
                         f"{'configurable' if sysm.chip.memory_configurable else 'one of its options'})")
        fab = _fabric(text)
        if fab is not None:
            fname, rate, scope = (*fab, "chip") if len(fab) == 2 else fab
            notes.append(f"scale-out fabric {fname}")
            how = "as the string states"
            if rate and scope == "node":
                box = box_chips(text, sysm)
                per = box[0] if box else (sysm.domain_chips if sysm.domain_chips <= 16 else None)
                how = (f"the string's {rate * 8 / 1e9:g} Gb/s a node or instance over its {per} chips" if per else "")
                rate = rate / per if per else None
                if per is None:
                    notes.append(f"the {fab[1] * 8 / 1e9:g} Gb/s the string states is a node's, and a node of "
                                 f"{sysm.name} is not one number of chips: the catalog's rate a chip kept")
            if rate and abs(rate - sysm.scaleout_bw) > 1e-6 * rate:
                sysm = sysm.evolve(scaleout_bandwidth_bytes_per_s=rate)
                notes.append(f"scale-out {rate * 8 / 1e9:.4g} Gb/s per GPU, {how}")
            self.matched["fabric"] = {"entry": fname, **({"bytes_per_s": rate} if rate else {})}
        self.matched["hardware"] = m.to_dict()
        return sysm, "; ".join(n for n in notes if n)

    def precision(self, text: str) -> tuple[str | None, str | None, str]:
        rule = self._match("precision", text)
        if rule is None:
            return None, None, f"precision {text!r} matches no rule in {self.file}"
        return rule["precision"], rule.get("kv_dtype"), rule.get("note", "")

    def precision_assumed(self, text: str) -> bool:
        """Whether the matching precision rule chooses between readings the string leaves open (its `assumed: true`:
        a bare 'INT8', weight-only or W8A8), so that its note is the row's assumption, not just how it was read."""
        rule = self._match("precision", text)
        return bool(rule is not None and rule.get("assumed"))

    def storage(self, text: str) -> dict[str, str] | None:
        """The checkpoint's storage format per module kind that the matching precision rule names (its
        `storage:` block: 'linear' for every matmul weight, or a module kind), else None."""
        rule = self._match("precision", text)
        return dict(rule["storage"]) if rule is not None and rule.get("storage") else None


# chips in one server or cloud instance whose name says how many ('a3-highgpu-4g', 'ct5lp-hightpu-8t': Google Cloud's
# GPU and TPU machine types end in the count; 'BM.GPU.H100.8', 'VM.GPU.A10.1': Oracle's shapes; 'gpu_8x_h100_sxm5':
# Lambda's instance types)
_BOX_COUNT = (re.compile(r"(?<![\w-])[a-z]\d[a-z]?-(?:high|mega|ultra|edge)gpu-(\d+)g\b", re.I),
              re.compile(r"(?<![\w-])ct\d\w*-(?:hightpu|standard)-(\d+)t\b", re.I),
              re.compile(r"\b(?:BM|VM)\.GPU[\w.-]*\.(\d+)(?![\w.])", re.I),
              re.compile(r"(?<![\w-])gpu_(\d+)x_", re.I))


@lru_cache(maxsize=1)
def _instance_chips() -> list[tuple[str, int]]:
    """(instance name, chips) from names.yaml's `instance_chips:` tables, longest name first ('g6e.xlarge' before
    'g6.xlarge' cannot clash, but 'Standard_NC24ads_A100_v4' should be tried whole)."""
    hw = _other_names().get("hardware") or {}
    out = [(str(k), int(v)) for rec in hw.values() for k, v in (rec.get("instance_chips") or {}).items()]
    return sorted(out, key=lambda kv: -len(kv[0]))


def box_chips(text: str, system: System | None = None) -> tuple[int, str] | None:
    """(chips, why) in one server or cloud instance the string names, or None where it names none (a bare part).

    An instance type says its count where its provider's naming does (Google Cloud's '-4g' / '-8t', Oracle's '.8',
    Lambda's 'gpu_8x_'), or names.yaml's `instance_chips:` lists it (AWS and Azure sizes: 'g5.12xlarge' is 4 A10G,
    'Standard_NC24ads_A100_v4' one A100 PCIe). A DGX or HGX server is one of the catalog's scale-up domains (8 GPUs;
    DGX GB200 a rack of 72), and an NVLink domain named by its size ('GB200 NVL72', 'NVL4') that many chips, at most
    the system's domain (Rubin's NVL144 counts dies, 72 packages). A pod or SuperPOD is many servers: not one."""
    t = text or ""
    for name, n in _instance_chips():  # (a separator may be dropped or changed: 'CloudMatrix384', 'Standard_ND96asr_v4')
        pat = r"[\s_.-]?".join(re.escape(w) for w in re.split(r"[\s_.-]", name))
        if re.search(rf"(?<![A-Za-z0-9-]){pat}(?![A-Za-z0-9-])", t, re.I):
            return n, f"{name}: {n} chip{'s' if n != 1 else ''} an instance (catalog/aliases/names.yaml)"
    for pat in _BOX_COUNT:
        m = pat.search(t)
        if m:
            return int(m.group(1)), f"{m.group(0).strip('_')}: {m.group(1)} chips an instance, as its name says"
    if system is None:
        return None
    if re.search(r"\b[DH]GX\b", t) and not re.search(r"super\s*pod|base\s*pod", t, re.I):
        return system.domain_chips, f"a {re.search(r'[DH]GX', t).group(0)} server: {system.domain_chips} chips"
    nvl = re.search(r"\bNVL\s?(\d+)\b", t, re.I)
    if nvl:
        n = min(int(nvl.group(1)), system.domain_chips)
        return n, f"one NVL{nvl.group(1)} domain: {n} chips"
    return None


# a Multi-Instance GPU slice: 'H100 MIG 3g.40gb', 'A100 (MIG 1g.10gb)', 'MIG 2g.20gb' (n of the GPU's 7 compute slices)
_MIG = re.compile(r"(?:\bMIG\s*)?(?<![\w.])\d\s*g\s*\.\s*\d+\s*gb\b|\bMIG\b", re.I)

# a GPU's core count as tables write it: '76-core GPU', '40 GPU cores', 'M3 Max 40c' (not '16c CPU')
_GPU_CORES = re.compile(r"(\d+)\s*-?\s*(?:core\s*gpu|gpu\s*cores?|c\b(?!\s*-?\s*cpu))", re.I)

# a size a model string states: '671B', '1.5b', '70B-chat' (not '8x7B', an expert count, nor 'A22B', nor '35GB')
_SIZE = re.compile(r"(?<![x×\w.])(\d+(?:\.\d+)?)\s?([bBmM])(?![a-zA-Z0-9])")
# the unit as the decimal point: 'bloom-7b1' is 7.1B, 'bloom-1b7' 1.7B, 'bloom-560m' as above
_SIZE_POINT = re.compile(r"(?<![x×\w.])(\d+)([bBmM])(\d)(?![a-zA-Z0-9])")
SIZE_TOLERANCE = 1.3  # a stated size is a rounded label: within 1.3× of a count (0.494B reads as 0.5B, 9.24B as 9B)


def _with_capacity(system: System, capacity_bytes: float, source: str) -> System:
    """`system` with its chip's memory set to one of the part's options (the source says which the row stated)."""
    chip = system.chip.model_copy(update={"hbm_capacity_bytes": capacity_bytes,
                                          "sources": {**system.chip.sources, "hbm_capacity_bytes": source}})
    return system.model_copy(update={"chip": chip})


def _size_clash(text: str, m: Model) -> str | None:
    """Why a string that states a model size cannot be this entry: none of its sizes is within SIZE_TOLERANCE of the
    entry's total or active parameter count (with or without the embedding tables). 'DeepSeek-Prover-V2-671B' names
    DeepSeek-V2 by its tokens, but 671B is DeepSeek-V3's size, not V2's 236B."""
    sizes = [float(n) * (1e9 if u in "bB" else 1e6) for n, u in _SIZE.findall(text)]
    sizes += [float(f"{n}.{d}") * (1e9 if u in "bB" else 1e6) for n, u, d in _SIZE_POINT.findall(text)]
    if not sizes:
        return None
    from ...core import arch

    pc = arch.param_counts(m)
    counts = [float(x) for x in (pc.total, pc.active, pc.total_matmul, pc.active_matmul) if float(x) > 0]
    if any(c / SIZE_TOLERANCE <= s <= c * SIZE_TOLERANCE for s in sizes for c in counts):
        return None
    said = ", ".join(f"{s / 1e9:g}B" for s in sizes)
    return (f"model {text!r} states {said}; the nearest catalog match, {m.name}, has {float(pc.total) / 1e9:.3g}B "
            f"({float(pc.active) / 1e9:.3g}B active): a different model")


def _mixer_clash(text: str, m: Model) -> str | None:
    """Why a string naming a recurrent token mixer (Mamba, RWKV) cannot be an entry that has only attention layers."""
    said = _token_set(text, split_family=True) & _RECURRENT
    if said and m.linear_attention is None:
        return (f"model {text!r} names a recurrent token mixer ({', '.join(sorted(said))}); the nearest catalog match, "
                f"{m.name}, has attention layers only: a different model")
    return None


@lru_cache(maxsize=None)
def _model(name: str) -> Model | None:
    try:
        return load_model(name)
    except CatalogError:
        return load_alias_model(name)


@lru_cache(maxsize=1)
def _model_candidates() -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for n in names("models"):
        m = load_model(n)
        out[n] = [(n, "catalog name"), (re.sub(r"\(.*?\)", "", m.display_name).strip(), "display name")]
    fallbacks = sorted({f.stem for d in catalog_dirs() for f in (d / "aliases" / "models").glob("*.yaml")})
    for n in fallbacks:
        if n not in out and load_alias_model(n) is not None:
            fb = load_alias_model(n)
            out[n] = [(n, "alias fallback"), (fb.display_name, "alias fallback")]
    models = _other_names().get("models") or {}
    for n, extra in _extra_names().items():
        if n in models:  # a chip's or system's other names ('V100', 'v3-8', '4090') name no model
            out.setdefault(n, []).extend((x, "alias name") for x in extra)
    return out


@lru_cache(maxsize=1)
def _extra_names() -> dict[str, list[str]]:
    d = _other_names()  # a broken table is an error (core.load), not an empty one
    return {k: list(v.get("names", [])) for k, v in (d.get("models") or {}).items()} | \
        {k: list(v.get("names", [])) for k, v in (d.get("hardware") or {}).items()}


@lru_cache(maxsize=1)
def _system_candidates() -> dict[str, list[tuple[str, str]]]:
    """Every system by its own names and its chip's; a chip's names point at the system built of it."""
    extra = _extra_names()
    systems = {n: load_system(n) for n in names("systems")}
    out: dict[str, list[tuple[str, str]]] = {}
    for n, s in sorted(systems.items(), key=lambda kv: kv[1].domain_chips):
        keys = [(n, "system name"), (re.sub(r"\(.*?\)", "", s.display_name).strip(), "system display name")]
        keys += [(x, "alias name") for x in extra.get(n, [])]
        out[n] = keys
    for c in names("hardware"):
        chip = load_chip(c)
        built = [n for n, s in sorted(systems.items(), key=lambda kv: kv[1].domain_chips) if s.chip.name == c]
        target = built[0] if built else c
        keys = [(c, "chip name"), (re.sub(r"\(.*?\)", "", chip.display_name).strip(), "chip display name")]
        keys += [(x, "alias name") for x in extra.get(c, [])]
        out.setdefault(target, []).extend(keys)
    return out


def _fabric(text: str) -> tuple | None:
    """(fabric entry, the rate stated beside it in B/s or None, whose it is: 'chip' or 'node' — `_rate_scope`) for a
    scale-out fabric named in the string."""
    best = None
    # a line rate spelt out before the network's name is the name's own spelling: '100 Gb/s Ethernet', '200 Gbps
    # Ethernet' -> '100G Ethernet'; '400 GbE' -> '400GbE'
    named = re.sub(r"(\d+)\s*(?:Gb/s|Gbps|Gbit/s|Gb)\s+(?=Ethernet\b)", r"\1G ", text, flags=re.I)
    named = re.sub(r"(\d+)\s+(?=GbE\b)", r"\1", named, flags=re.I)
    for n in names("fabrics"):
        f = _load_cached("fabrics", n)
        for phrase in f.names:
            if re.search(rf"(?<![A-Za-z0-9]){re.escape(phrase)}(?![A-Za-z0-9])", named, re.IGNORECASE):
                if best is None or len(phrase) > best[1]:
                    best = (n, len(phrase))
    if best is None:
        return None
    rate = _RATE.search(text)
    if rate is None:
        return best[0], None
    bits = float(rate.group(1).replace(",", "")) * (1e12 if rate.group(2).lower().startswith("t") else 1e9)
    # a count of NICs before the rate ('IB 8×400Gb/s', '8× CX7 NDR 400G per node'): the node's total, its NICs'
    nics = re.search(r"(?<![\w.])(\d+)\s*[x×*]\s*(?:[A-Za-z][\w-]*\s+){0,3}$", text[:rate.start()])
    if nics:
        return best[0], int(nics.group(1)) * bits / 8, "node"
    return best[0], bits / 8, _rate_scope(text, rate.end(), bits)


# a line rate as setups write it: '400Gb/s', '3,200 Gbps', '3.2 Tbps', '400G'
_RATE = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(Tb/s|Tbps|Tbit/s|Gb/s|Gbps|Gbit/s|G\b)")


def _rate_scope(text: str, end: int, bits: float) -> str:
    """Whose the rate is: 'chip' where the string says so ('per GPU') or where it is one NIC's (as 'CX7 400 Gb/s' is);
    'node' where it says per node or instance, where a cloud instance is named (AWS and Google quote an instance's
    network: '3,200 Gbps EFA' is p5.48xlarge's eight GPUs), or where it exceeds every port in catalog/fabrics (3.2
    Tb/s is no one NIC's)."""
    after = text[end:end + 24]
    if re.match(r"\s*(?:/|per|a|each)\s*(?:gpu|chip|accelerator|device|card)\b", after, re.I):
        return "chip"
    if re.match(r"\s*(?:/|per|a|each)\s*(?:node|instance|server|host|vm|machine)\b", after, re.I) or \
            re.search(r"\bper\s*(?:node|instance|server|host)\b", text, re.I):
        return "node"
    if re.search(r"\bper\s*(?:gpu|chip|accelerator)\b", text, re.I):
        return "chip"
    if box_chips(text) is not None:
        return "node"
    widest = max(_load_cached("fabrics", n).port_bandwidth_bytes_per_s for n in names("fabrics")) * 8
    return "node" if bits > widest * 1.001 else "chip"
