"""What a validation returns: :class:`Report` (the findings, the rules not checked for want of
context, the decoded words) and :class:`NotChecked`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from .engine import Decoded
from ..core.errors import Finding, HasFindings

__all__ = ["NotChecked", "Report", "ROLES", "role_of"]


@dataclass(frozen=True, slots=True)
class NotChecked:
    """A rule that did not run: context it needs was not given (``why == "context"``; ``missing``
    names the context), or it reads a field of a partly known word that is known at run time only
    (``why == "run-time"``; ``missing`` names the field)."""

    code: str
    missing: tuple[str, ...]
    rule: str
    source: str
    why: str = "context"

    def __str__(self) -> str:
        what = "needs" if self.why == "context" else "reads run-time"
        return f"not checked {self.code}: {what} {', '.join(self.missing)} ({self.rule}) [{self.source}]"

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "missing": list(self.missing), "rule": self.rule, "source": self.source,
                **({"why": self.why} if self.why != "context" else {})}


#: The words of one instruction (:func:`descgen.check_mma`), in the order they are shown.
ROLES = ("idesc", "a_desc", "b_desc", "zcm")


def role_of(f: Finding) -> str:
    """The word a finding of :func:`descgen.check_mma` is about: its field's prefix
    (``a_desc.swizzle`` -> ``a_desc``), else the instruction descriptor."""
    head = f.field.split(".", 1)[0]
    return head if "." in f.field and head in ROLES else "idesc"


@dataclass(frozen=True, slots=True)
class Report(HasFindings):
    """What a validation found: a sequence of :class:`Finding` records (iterate, ``len``, index),
    plus the rules that could not run and the decoded words.

    Attributes:
        findings: every finding, all checks run (field checks first, then the rules in catalog order).
        not_checked: rules whose context was missing.
        decoded: ``{role: Decoded}`` (``idesc``, ``smem``, ``zcm``, or ``a_desc``/``b_desc`` for
            :func:`descgen.check_mma`).
        context: the context the rules ran with (normalized; None = not given).
    """

    findings: tuple[Finding, ...]
    not_checked: tuple[NotChecked, ...]
    decoded: Mapping[str, Decoded]
    context: Mapping[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def __getitem__(self, i: int) -> Finding:
        return self.findings[i]

    def findings_for(self, role: str) -> tuple[Finding, ...]:
        """The findings about the word ``role`` (a key of ``decoded``): all of them for a one-word
        report, else those :func:`role_of` assigns to it."""
        if len(self.decoded) <= 1:
            return self.findings if role in self.decoded else ()
        return tuple(f for f in self.findings if role_of(f) == role)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "context": {k: v for k, v in self.context.items() if v is not None},
            "findings": [f.as_dict() for f in self.findings],
            "not_checked": [n.as_dict() for n in self.not_checked],
            "decoded": {role: d.as_dict() for role, d in self.decoded.items()},
        }

