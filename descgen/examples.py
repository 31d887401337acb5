"""The catalog's examples made concrete, and the rules page (``docs/rules.md``).

Each ``[[rule]]`` of ``tables/rules.toml`` has a legal and an illegal example: the fields of its
words (or a raw word, or a PTX snippet) and the context. :func:`example` builds the words,
:meth:`Example.run` validates them, :meth:`Example.command` spells the ``descgen`` command that
shows them; :func:`rules_markdown` writes the page every code is listed on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, cast

from .catalog import catalog, layout_table
from .codes import field_codes, usage_codes
from .engine import encode
from .facts import KIND_LAYOUTS, idesc_defaults
from .idesc import validate_idesc
from .instruction import check_mma
from .loader import layout
from .ptx.scan import ScanResult, scan_ptx
from .report import Report
from .smem import validate_smem
from .taddr import validate_taddr
from .types import Kind
from .zcm import validate_zcm

__all__ = ["Example", "example", "rules_markdown"]


@dataclass(frozen=True, slots=True)
class Example:
    """A catalog example made concrete: the words, the kind and the context.

    ``words`` maps a role to its word: ``idesc``/``smem``/``zcm`` for a one-word example, or
    ``idesc``, ``a_desc``, ``b_desc`` (and ``zcm``) for an instruction (``as_ == "mma"``); none for a
    PTX example (``as_ == "ptx"``), whose ``ptx`` snippet is scanned by :func:`descgen.scan_ptx`.
    """

    as_: str
    kind: str | None
    words: Mapping[str, int]
    context: Mapping[str, Any]
    ptx: str | None = None

    def command(self) -> str:
        """The CLI command that shows it (``descgen validate ...`` or ``descgen check ...``)."""
        ctx = " ".join(_option(k, v) for k, v in self.context.items())
        if self.as_ == "ptx":
            lines = " ".join(f"'{line.strip()}'" for line in (self.ptx or "").splitlines())
            return f"printf '%s\\n' {lines} | descgen scan -" + (f" {ctx}" if ctx else "")
        kind = f" --kind {self.kind}" if self.kind else ""
        if self.as_ == "mma":
            words = " ".join(f"--{role.replace('_', '')} {_hex(role, w)}" for role, w in self.words.items())
            return f"descgen check {words}{kind}" + (f" {ctx}" if ctx else "")
        (role, word), = self.words.items()
        return f"descgen validate {_hex(role, word)} --as {self.as_}{kind}" + (f" {ctx}" if ctx else "")

    def run(self) -> Report | ScanResult:
        """Validate the example (what ``command()`` prints): a :class:`Report`, or for a PTX example
        a :class:`descgen.ptx.scan.ScanResult` (the same ``findings``, ``codes`` and ``ok``)."""
        if self.as_ == "ptx":
            return scan_ptx(self.ptx or "", **self.context)
        context: dict[str, Any] = dict(self.context)  # checked by the validators, as a caller's keywords are
        if self.as_ == "mma":
            words: dict[str, Any] = dict(self.words)
            return check_mma(kind=cast(Kind, self.kind), **words, **context)
        (_, word), = self.words.items()
        if self.as_ == "idesc":
            return validate_idesc(word, cast(Kind, self.kind), **context)
        if self.as_ == "taddr":
            return validate_taddr(word, **self.context)
        return (validate_smem if self.as_ == "smem" else validate_zcm)(word, **self.context)


def _hex(role: str, word: int) -> str:
    return f"{word:#010x}" if role in ("idesc", "taddr") else f"{word:#018x}"


def _option(name: str, value: Any) -> str:
    flag = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else f"--no-{name.replace('_', '-')}"
    return f"{flag} {value:#x}" if name in ("pattern_start", "alloc_base") else f"{flag} {value}"


_LAYOUT_OF = {"smem": "smem_desc", "zcm": "zcm_desc", "a_desc": "smem_desc", "b_desc": "smem_desc", "taddr": "taddr"}


def example(spec: Mapping[str, Any]) -> Example:
    """Build the words of a catalog example (fields are encoded with the generic engine and
    ``check=False``, so an illegal example is the word a kernel would hold)."""
    as_ = spec["as"]
    kind = spec.get("kind")
    if as_ == "ptx":
        return Example(as_, None, {}, dict(spec.get("context", {})), spec["ptx"])
    words = {}
    roles = ("idesc", "a_desc", "b_desc", "zcm") if as_ == "mma" else (as_,)
    for role in roles:
        fields = spec.get(role) if as_ == "mma" else spec.get("fields")
        if fields is None:
            if "word" in spec and as_ != "mma":
                words[role] = int(spec["word"], 16)
            continue
        if role == "idesc":
            kind = cast(Kind, kind)  # an idesc example names its kind (tables/rules.toml is checked)
            values = {**idesc_defaults(kind), **fields}
            values = {k: v for k, v in values.items() if k in layout(KIND_LAYOUTS[kind]).by_name}
            words[role] = int(encode(KIND_LAYOUTS[kind], kind, check=False, **values))
        else:
            words[role] = int(encode(_LAYOUT_OF[role], None, check=False, **fields))
    return Example(as_, kind, words, dict(spec.get("context", {})))


def rules_markdown() -> str:
    """The rules page (``docs/rules.md``): every code, generated from the tables."""
    lines = [
        "# Rules descgen checks",
        "",
        "Generated from `tables/rules.toml` and the layout tables by `descgen rules --markdown`;",
        "`tests/test_validate.py` checks that this page is current. `descgen explain CODE` prints one",
        "entry with a legal and an illegal example.",
        "",
        "Severity: **error** breaks a PTX rule (encoders refuse it, `validate`/`check` exit 1);",
        "**warning** is legal but suspicious or ignored by the hardware. *Needs*: context the rule",
        "cannot run without (reported as not checked when missing); *uses*: context that narrows it.",
        "",
        "## Rules between fields, words and the instruction",
        "",
        "| code | severity | applies to | needs / uses | rule | source |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in catalog().values():
        ctx = ", ".join(r.needs) + (f" (uses {', '.join(r.uses)})" if r.uses else "")
        lines.append(f"| `{r.code}` | {r.severity} | {r.applies} | {ctx or '-'} | {_md(r.rule)} | {_md(r.source)} |")
    lines += ["", "### Examples", ""]
    for r in catalog().values():
        assert r.legal is not None and r.illegal is not None  # every catalog rule has both
        lines += [f"- `{r.code}`", f"  - legal: `{example(r.legal).command()}`", f"  - illegal: `{example(r.illegal).command()}`"]
    for title, codes in (("Field checks (one per field, generated from the layout tables)", field_codes()),
                         ("Shared-memory tiles (descgen layout, smem --tile, advance_smem: raised or found in the "
                          "addresses a descriptor reads)", layout_table()),
                         ("Usage errors (the call itself is wrong; raised, never found in a word)", usage_codes())):
        lines += ["", f"## {title}", "", "| code | severity | rule | source |", "| --- | --- | --- | --- |"]
        lines += [f"| `{r.code}` | {r.severity} | {_md(r.rule)} | {_md(r.source)} |" for r in codes.values()]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")
