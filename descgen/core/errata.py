"""The spec errata (``docs/spec-errata.md``, shipped in the package as ``descgen/spec-errata.md``):
every place the PTX text contradicts itself and what descgen decided, by code (``E19``). Messages
and sources cite them (``Table 39 (E11)``); ``descgen explain E19`` shows one.

The Markdown file is the one home of each erratum's text: an entry is a ``## E<n>: title`` section.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["Erratum", "errata", "erratum", "ERRATUM_CODE"]

#: An erratum's code as messages cite it: ``E`` and a number.
ERRATUM_CODE = re.compile(r"E[1-9][0-9]*")
_HEAD = re.compile(r"^## (E[1-9][0-9]*): (.*)$", re.M)


@dataclass(frozen=True)
class Erratum:
    """One erratum: ``code`` (``E19``), ``title`` and ``text`` (its Markdown, quote to pinning tests)."""

    code: str
    title: str
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "title": self.title, "text": self.text}


@functools.cache
def errata() -> dict[str, Erratum]:
    """Every erratum by code, in file order, read from the package's ``spec-errata.md``."""
    from importlib import resources

    text = resources.files("descgen").joinpath("spec-errata.md").read_text(encoding="utf-8")
    heads = list(_HEAD.finditer(text))
    out = {}
    for head, after in zip(heads, [*heads[1:], None]):
        end = after.start() if after else len(text)
        body = text[head.end():end].split("\n## ", 1)[0].strip()
        out[head.group(1)] = Erratum(head.group(1), head.group(2).strip(), body)
    return out


def erratum(code: str) -> Erratum | None:
    """The erratum ``code`` (``E19``, any case), or None."""
    return errata().get(code.strip().upper())
