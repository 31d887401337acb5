"""Every code descgen can report, with its rule and source: what ``descgen explain`` and
``descgen rules`` list.

Four sources, one registry (:func:`all_codes`): the per-field codes every layout generates
(``IDESC-N-RANGE``, ``SMEM-RESERVED-14``: :func:`field_codes`), the catalog of
``tables/rules.toml`` (:func:`descgen.model.catalog.catalog`), the codes of the shared-memory tile model
(``LAYOUT-*``, ``SMEM-START-ADDRESS-CARRY``: the ``[[layout]]`` entries of ``tables/codes.toml``,
:func:`descgen.model.catalog.layout_table`), and the codes of calls that are wrong in themselves
(:func:`usage_codes`: a kind, an argument, a context value, a batch request, an emitter format, a
malformed table): the ``[[usage]]`` entries of ``tables/codes.toml`` and the codes generated from
the layouts and the context names. ``tests/test_codes.py`` collects every code raised anywhere
and checks that it is here.
"""

from __future__ import annotations

import functools

from .model.catalog import Rule, catalog, contexts, layout_table, usage_table
from .model.context import context_source
from .model.engine import check_rule, code_word, finding_code
from .model.facts import ABSENT_ARGS
from .model.loader import LAYOUT_FILES, layout

__all__ = ["field_codes", "usage_codes", "all_codes"]


_CHECKS = {"uint": ("TYPE", "ALIGN", "RANGE"), "flag": ("TYPE", "VALUE"), "enum": ("CODE",), "reserved": ("RESERVED",),
           "constant": ("CONST",)}


@functools.cache
def field_codes() -> dict[str, Rule]:
    """The per-field codes every layout generates (``IDESC-N-RANGE``, ``SMEM-RESERVED-14``...), as
    rules without examples: one per (descriptor word, field, check), the union over layouts."""
    out: dict[str, Rule] = {}
    for name in LAYOUT_FILES:
        lay = layout(name)
        for f in lay.fields:
            for check in _CHECKS[f.type]:
                if check == "ALIGN" and f.transform.align == 1:
                    continue
                code = finding_code(lay.word, f, check)
                if code in out:
                    continue
                out[code] = Rule(code, "error" if check in ("TYPE", "ALIGN") else f.severity, lay.word, (f.name,), (),
                                 (), check_rule(f, check), f.source)
    return out


@functools.cache
def usage_codes() -> dict[str, Rule]:
    """Codes of calls that are wrong in themselves (a kind, an argument, a word width, a context
    value): raised as :class:`UsageError` / :class:`EncodeError`, never found in a word. The
    ``[[usage]]`` table, plus one code per absent idesc argument, word width, required field and
    context name."""
    def rule(code: str, applies: str, field: str, text: str, source: str) -> tuple[str, Rule]:
        return code, Rule(code, "error", applies, (field,), (), (), text, source)

    out = dict(usage_table())
    out.update(rule(f"IDESC-{arg.upper().replace('_', '-')}-ABSENT", "idesc", arg,
                    f"{arg} is given but the kind's layout has no field for it", "Tables 42-44") for arg in ABSENT_ARGS)
    for word, source in (("idesc", "§9.7.16.4.2 (32-bit)"), ("smem", "§9.7.16.4.1 (64-bit)"),
                         ("zcm", "§9.7.16.4.3 (64-bit)"), ("taddr", "§9.7.16.1.1 (32-bit)"),
                         ("wgmma_smem", "§9.7.15.5.1.2.2 (64-bit)")):
        out.update([rule(f"{code_word(word)}-WORD-RANGE", word, "word",
                         f"a {word} word is an unsigned integer of its width", source)])
        out.update([rule(f"{code_word(word)}-FIELD-FIXED", word, "field", "reserved and constant fields are not "
                         "values: they are not set by name (descgen.model.engine.check_value)", source.split(" (")[0])])
        out.update([rule(f"{code_word(word)}-FIELD-UNKNOWN", word, "field", "descgen.encode takes the layout's value "
                         "fields by name; an unknown name is never ignored", source.split(" (")[0])])
    for lay in (layout(n) for n in LAYOUT_FILES):
        for f in lay.fields:
            if f.is_value and f.default is None and not any(f.name in d for d in lay.defaults.values()):
                out.update([rule(f"{code_word(lay.word)}-{f.name.upper().replace('_', '-')}-MISSING", lay.word, f.name,
                                 "a value is required", f.source)])
    out.update(rule(f"CONTEXT-{name.upper().replace('_', '-')}", "context", name, f"{name} is {text}",
                    context_source(name)) for name, text in ((n, c.meaning) for n, c in contexts().items()))
    return out


def all_codes() -> dict[str, Rule]:
    """Every code descgen can report: generated field codes, the catalog, the tile/layout codes
    and the usage codes."""
    return {**field_codes(), **catalog(), **layout_table(), **usage_codes()}
