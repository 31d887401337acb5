"""The encoders' commands without click: ``descgen idesc`` and ``descgen zcm``, called by their
click commands (:mod:`descgen.cli.app` declares the options, the bodies are here) and by the
click-free fast path (:mod:`descgen.cli.fast`), which reads the same options from the table
generated from those click commands. Nothing here imports click: a usage error is
:func:`descgen.cli.output.usage_error`, raised before anything is printed.
"""

from __future__ import annotations

from typing import Any

import descgen

from .output import Output, mask_info, plain_mask, usage_error

__all__ = ["idesc", "zcm", "renderer", "check_mn"]


def renderer() -> Any:
    """:mod:`descgen.cli.render` (rich), imported when a table is drawn."""
    from . import render

    return render


def check_mn(m: int | None, n: int | None) -> None:
    if (m is None) != (n is None):
        raise usage_error("--m and --n go together (the mask needs the MMA's M and N)")


def _functions(out: Output, functions: bool) -> None:
    if functions and not out.code:
        raise usage_error("--functions writes source code: give --format c, cpp, ptx or python")


def idesc(out: Output, kind: str, m: int, n: int, atype: str | None, btype: str | None, dtype: str | None,
          a_major: str | None, b_major: str | None, negate_a: bool, negate_b: bool, saturate: bool, sparse: bool,
          sparsity_selector: int, max_shift: int | None, scale_type: str | None, a_sf_id: int, b_sf_id: int,
          k: int | None, functions: bool, context: dict[str, Any]) -> None:
    """Encode a 32-bit tcgen05.mma instruction descriptor (PTX §9.7.16.4.2, Tables 42-44).

    Types left out take the kind's defaults; the table view lists the defaults applied. The
    context options (--cta-group, --ws, --sp, --scale-vec, --a-tmem, --arch) add the rules
    that need them: a value that breaks one is refused (exit 1).

    \b
      descgen idesc --kind f16 --m 128 --n 256                    -> 0x08400010
      descgen idesc --kind f16 --m 256 --n 128 --cta-group 2      -> 0x10200010
      descgen idesc --kind f8f6f4 --m 128 --n 128 --atype e2m1 --btype e2m1
    """
    args: dict[str, Any] = dict(
        m=m, n=n, atype=atype, btype=btype, dtype=dtype, a_major=a_major or "k", b_major=b_major or "k",
        negate_a=negate_a, negate_b=negate_b, saturate=saturate, sparse=sparse,
        sparsity_selector=sparsity_selector, max_shift=max_shift or 0, scale_type=scale_type,
        a_sf_id=a_sf_id, b_sf_id=b_sf_id, k=k,
    )
    out.input = {"kind": kind, **args, **context}
    _functions(out, functions)
    word = descgen.encode_idesc(kind, **args, **context)
    if not (out.json or out.table or out.code):
        out.word(word, 32)
        return
    report = descgen.validate_idesc(word, kind, **context)
    if out.code:
        out.write_code(report, functions=functions)
        return
    d = report.decoded["idesc"]
    defaults = {name: value for name, value in descgen.idesc_defaults(kind).items() if args.get(name) is None}
    if out.json:
        out.emit_json(defaults=defaults, result=d.as_dict())
    else:
        renderer().encoded(d, defaults=defaults)


def zcm(out: Output, skip_span: int, use_span: int, start_count: tuple[int, ...], first_span: tuple[int, ...],
        nonzero_mask: bool, column_shift: int, mask_m: int | None, mask_n: int | None, functions: bool,
        context: dict[str, Any]) -> None:
    """Encode a 64-bit zero-column mask descriptor (PTX §9.7.16.4.3, Table 45).

    With --m and --n, also show the N-bit mask it generates (bit j = column j of B, 1 = zeroed),
    per sub-mask in binary (MSB left) and hex; they also add the rules for that M (M itself,
    the column shift limit, unused sub-masks), and --ws/--no-ws the rule that the operand exists
    on tcgen05.mma.ws only: a value that breaks one is refused (exit 1). Piped output is the word
    only.

    \b
      descgen zcm --start-count 1,3,5,7 --skip-span 1 --use-span 13 --m 32 --n 64
    """
    check_mn(mask_m, mask_n)
    _functions(out, functions)
    args = dict(start_count=start_count, first_span=first_span, nonzero_mask=nonzero_mask,
                skip_span=skip_span, use_span=use_span, column_shift=column_shift)
    ctx = {"m": mask_m, "n": mask_n, "ws": context["ws"]}
    out.input = {**args, "start_count": list(start_count), "first_span": list(first_span), **ctx}
    word = descgen.encode_zcm(**args, **ctx)  # M breaks a rule: exit 1
    mask = mask_info(word, mask_m, mask_n) if mask_m is not None else None  # N does not split: exit 2
    if not (out.json or out.table or out.code):
        out.word(word, 64)
        return
    report = descgen.validate_zcm(word, **ctx)
    if out.code:
        out.write_code(report, notes=plain_mask(mask) if mask else (), functions=functions)
        return
    d = report.decoded["zcm"]
    if out.json:
        out.emit_json(result=d.as_dict(), **({"mask": mask} if mask else {}))
    else:
        renderer().encoded(d, mask=mask)
