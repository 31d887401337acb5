"""What the sanitizer's tests compare: random words for a site's run-time bits, and what the
Python engine says of them (tests/test_instrument.py, tests/device/sanitizer_checks/harness.py)."""

from __future__ import annotations

import random

from descgen import check_mma, check_wgmma, validate_smem
from descgen.model.engine import KnownBits, plan
from descgen.model.facts import kind_facts
from descgen.ptx.qualifiers import CpQualifiers, WgmmaQualifiers
from descgen.sanitizer.instrument import ROLES

ROLE_OF = {v: k for k, v in ROLES.items() if k != "s_desc"}


def layout_of(q, role: str) -> str:
    if isinstance(q, WgmmaQualifiers):
        return "wgmma_smem_desc"
    if role == "idesc":
        return kind_facts(q.kind).plan.layout.name
    return {"zcm": "zcm_desc"}.get(role, "smem_desc")


def fill(rng: random.Random, known: KnownBits, width: int, lay: str, kind: str | None) -> int:
    """A word with ``known``'s bits and random unknown ones: each field with an unknown bit gets a
    legal raw value (0 for reserved bits, a defined code) three times in four, else any."""
    word = known.value & known.mask
    p = plan(lay, kind)
    for f in p.layout.fields:
        fmask = ((1 << f.width) - 1) << f.lo
        if fmask & ~known.mask & ((1 << width) - 1) == 0:
            continue
        if rng.random() < 0.75:
            if f.type == "reserved":
                raw = 0
            elif f.type == "constant":
                raw = f.const
            elif f.type == "enum":
                raw = rng.choice(list(f.codes(kind).values()))
            else:
                raw = rng.randrange(1 << f.width)
        else:
            raw = rng.randrange(1 << f.width)
        free = fmask & ~known.mask
        word = (word & ~free) | ((raw << f.lo) & free)
    return word


def engine_findings(inst, words: dict[str, int], arch: str | None, smem_size: int) -> set[tuple[str, str]]:
    """The (code, operand) of each error or warning the engine finds for the instruction's words."""
    q, ctx = inst.qualifiers, dict(inst.report.context)
    if isinstance(q, WgmmaQualifiers):
        args = {k: ctx[k] for k in ("atype", "btype", "dtype", "m", "n", "k", "sp", "trans_a", "trans_b", "scale_a",
                                    "scale_b", "scale_d", "sp_sel", "satfinite")}
        report = check_wgmma(**args, a_desc=words.get("a_desc"), b_desc=words["b_desc"], smem_size=smem_size)
    elif isinstance(q, CpQualifiers):
        report = validate_smem(words["s_desc"], arch=arch, smem_size=smem_size)
        return {(f.code, "s_desc") for f in report.findings if f.severity in ("error", "warning")}
    else:
        report = check_mma(idesc=words["idesc"], kind=q.kind, a_desc=words.get("a_desc"), b_desc=words["b_desc"],
                           zcm=words.get("zcm"), smem_size=smem_size,
                           **{k: v for k, v in ctx.items() if v is not None and k != "smem_size"})
    out = set()
    for f in report.findings:
        if f.severity in ("error", "warning"):
            head = f.field.split(".")[0]
            out.add((f.code, head if head in ("a_desc", "b_desc", "zcm") else "idesc"))
    return out


