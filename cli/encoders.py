"""The encoders' commands, ``descgen idesc``, ``smem`` and ``zcm``: their bodies (the click commands
of :mod:`descgen.cli.app` declare the options). A usage error is
:func:`descgen.cli.output.usage_error`, raised before anything is printed.
"""

from __future__ import annotations

from typing import Any

import descgen

from .output import Output, mask_info, plain_mask, usage_error

__all__ = ["idesc", "smem", "zcm", "renderer", "check_mn", "wgmma_arch"]

_TILE_ONLY = ("dtype", "major", "atom_order", "kind")


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


def idesc(out: Output, kind: descgen.Kind, m: int, n: int, atype: str | None, btype: str | None, dtype: str | None,
          a_major: str | None, b_major: str | None, negate_a: bool, negate_b: bool, saturate: bool, sparse: bool,
          sparsity_selector: int, max_shift: int | None, scale_type: str | None, a_sf_id: int, b_sf_id: int,
          k: int | None, svg: str | None, functions: bool, context: dict[str, Any]) -> None:
    """Encode a 32-bit tcgen05.mma instruction descriptor (PTX §9.7.16.4.2, Tables 42-44).

    Types left out take the kind's defaults; the table view lists the defaults applied. The
    context options (--cta-group, --ws, --sp, --scale-vec, --a-tmem, --arch) add the rules
    that need them: a value that breaks one is refused (exit 1).

    --svg FILE draws the MMA (descgen.pictures.idesc_shape_svg): A, B and D with their extents,
    types and major-ness; --svg - prints the SVG alone.

    \b
      descgen idesc --kind f16 --m 128 --n 256                    -> 0x08400010
      descgen idesc --kind f16 --m 256 --n 128 --cta-group 2      -> 0x10200010
      descgen idesc --kind f8f6f4 --m 128 --n 128 --atype e2m1 --btype e2m1
      descgen idesc --kind f16 --m 128 --n 256 --b-major mn --svg mma.svg
    """
    args: dict[str, Any] = dict(
        m=m, n=n, atype=atype, btype=btype, dtype=dtype, a_major=a_major or "k", b_major=b_major or "k",
        negate_a=negate_a, negate_b=negate_b, saturate=saturate, sparse=sparse,
        sparsity_selector=sparsity_selector, max_shift=max_shift or 0, scale_type=scale_type,
        a_sf_id=a_sf_id, b_sf_id=b_sf_id, k=k,
    )
    out.input = {"kind": kind, **args, **context}
    _functions(out, functions)
    if svg is not None:
        from .layout import check_svg, write_svg  # (and the pictures: only when one is asked for)

        check_svg(out, svg)
    word = descgen.encode_idesc(kind, **args, **context)
    if svg is not None:
        from descgen.pictures.idesc_shape import idesc_shape_svg

        report = descgen.validate_idesc(word, kind, **context)
        write_svg(svg, idesc_shape_svg(report.decoded["idesc"], report.findings))
        if svg == "-":
            return
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
    args: dict[str, Any] = dict(start_count=start_count, first_span=first_span, nonzero_mask=nonzero_mask,
                                skip_span=skip_span, use_span=use_span, column_shift=column_shift)
    ctx = {"m": mask_m, "n": mask_n, "ws": context["ws"]}
    out.input = {**args, "start_count": list(start_count), "first_span": list(first_span), **ctx}
    word = descgen.encode_zcm(**args, **ctx)  # M breaks a rule: exit 1
    mask = (mask_info(word, mask_m, mask_n)  # N does not split: exit 2
            if mask_m is not None and mask_n is not None else None)
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


def smem(out: Output, start_address: int | None, stage_bytes: int | None, swizzle: descgen.Swizzle, lbo: int | None,
         sbo: int | None, base_offset: int | None, lbo_mode: str | None, tile: tuple[int, int] | None,
         context: dict[str, Any], **tile_args: Any) -> None:
    """Encode a 64-bit shared memory matrix descriptor (PTX §9.7.16.4.1, Tables 40-41).

    Two forms. With --lbo and --sbo: the fields as given (bytes; the descriptor stores them
    >> 4). With --tile MNxK --dtype --major: the descriptor of that operand tile stored as
    Table 53 swizzle atoms, LBO/SBO/base offset derived, and the reasoning shown (§9.7.16.3).
    Under cta_group::2, give each CTA's half (A: M/2 x K, B: N/2 x K).

    --arch sm_90a: the Hopper wgmma descriptor (§9.7.15.5.1.2.2: no version bits, 2-bit swizzle
    in bits 62-63, no --lbo-mode, no 128B_base32B), for the same canonical layouts.

    \b
      descgen smem --start-address 0x8000 --lbo 16 --sbo 256 --swizzle 32B   -> 0xc000401000010800
      descgen smem --tile 128x64 --dtype bf16 --major k --swizzle 128B --addr 0x400
      descgen smem --tile 128x64 --dtype bf16 --major k --swizzle 128B --format cpp --name a_desc
      descgen smem --lbo 16 --sbo 1024 --swizzle 128B --format cpp --name a_desc
      descgen smem --tile 64x64 --dtype f16 --major k --swizzle 128B --addr 0x400 --arch sm_90a
    """
    runtime = start_address is None
    if runtime and not out.code:
        raise usage_error("missing --addr: it may be left out only with --format c, cpp, ptx or "
                               "python, which write functions that take the address at run time")
    if stage_bytes is not None and (not runtime or tile is None):
        raise usage_error("--stage-bytes sets the stage function's step: it applies with --tile, without --addr")
    context = {**context, "pattern_start": tile_args["pattern_start"]}
    wgmma = wgmma_arch(context)
    if wgmma and lbo_mode is not None:
        raise usage_error("--lbo-mode is tcgen05's (Table 40 bit 52): the wgmma descriptor (--arch sm_90a) has none")
    given = [f"--{name.replace('_', '-')}" for name in _TILE_ONLY if tile_args[name] is not None]
    if tile is None:
        if given:
            raise usage_error(f"{', '.join(given)} only apply with --tile")
        missing = [opt for opt, value in (("--lbo", lbo), ("--sbo", sbo)) if value is None]
        if missing:
            raise usage_error(f"missing {' and '.join(missing)}: give --lbo and --sbo, or --tile MNxK with "
                                   "--dtype and --major to compute them")
        args: dict[str, Any] = dict(start_address=start_address or 0, lbo=lbo, sbo=sbo, swizzle=swizzle,
                                    base_offset=base_offset or 0, lbo_mode=lbo_mode or "relative")
        out.input = {**args, **context, "start_address": start_address}
        if wgmma:
            args.pop("lbo_mode")
            word = descgen.encode_wgmma_smem(**args, pattern_start=context["pattern_start"])
        else:
            word = descgen.encode_smem(**args, **context)
        _show_smem(out, word, context, functions=runtime)
        return
    clash = [opt for opt, value in (("--lbo", lbo), ("--sbo", sbo), ("--base-offset", base_offset),
                                    ("--lbo-mode", lbo_mode)) if value is not None]
    if clash:
        raise usage_error(f"--tile computes LBO, SBO and the base offset: drop {', '.join(clash)} "
                               "(set where the swizzle pattern starts with --pattern-start)")
    missing = [f"--{name}" for name in ("dtype", "major") if tile_args[name] is None]
    if missing:
        raise usage_error(f"--tile needs {' and '.join(missing)}")
    targs = dict(tile_args, atom_order=tile_args["atom_order"] or "mn_first")
    out.input = {"tile": list(tile), "swizzle": swizzle, "start_address": start_address, **targs}
    td = descgen.smem_for_tile(mn=tile[0], k=tile[1], swizzle=swizzle, start_address=start_address or 0, **targs,
                               **({"arch": context["arch"]} if context["arch"] else {}))
    if runtime:
        out.write_code(td, functions=True, stage_bytes=stage_bytes)
    elif out.table:
        from .layout import show_tile

        show_tile(td, descgen.decode_wgmma_smem(td.word) if wgmma else descgen.decode_smem(td.word))
    elif out.code:
        out.write_code(td)
    else:
        _show_smem(out, td.word, context, tile=td.as_dict())


def wgmma_arch(context: dict[str, Any]) -> bool:
    """Whether ``--arch`` selects the wgmma (sm_90a) shared memory descriptor."""
    from descgen.model.facts import smem_family

    return context.get("arch") is not None and smem_family(context["arch"]) != "smem_desc"


def _show_smem(out: Output, word: int, context: dict[str, Any], functions: bool = False, **extra: Any) -> None:
    validate = descgen.validate_wgmma_smem if wgmma_arch(context) else descgen.validate_smem
    if not (out.json or out.table or out.code):
        out.word(word, 64, lambda: validate(word, **context).findings)
        return
    report = validate(word, **context)
    if out.code:
        out.write_code(report, functions=functions)
        return
    d = next(iter(report.decoded.values()))
    if out.json:
        out.emit_json(result=d.as_dict(), **extra)
    else:
        renderer().encoded(d)
