"""``descgen decode``: its body (the click command of :mod:`descgen.cli.app` declares the arguments
and options). A usage error is :func:`descgen.cli.output.usage_error`, raised before anything is
printed. The exit status is returned: 1 when a word breaks a PTX rule or no reading is consistent.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import descgen

from .context import APPLIES, check_applies, option_name
from .encoders import check_mn, renderer, wgmma_arch
from .output import (
    ENVELOPE_VERSION,
    EXIT_OK,
    EXIT_RULE,
    EXIT_USAGE,
    Output,
    echo,
    hex_word,
    mask_info,
    plain_decoded,
    plain_mask,
    usage_error,
    word_as,
)
from .params import WORD

__all__ = ["decode"]


def decode(out: Output, words: tuple[str, ...], as_: descgen.Descriptor | None, kind: descgen.Kind | None,
           mask_m: int | None, mask_n: int | None,
           context: dict[str, Any], verbose: bool, show_all: bool, short: bool) -> int:
    """Decode each WORD and check it against the PTX tables.

    Several words (a debugger's dump of the idesc, A and B: decode 0x... 0x... 0x...) are
    decoded one after another, each read on its own; - reads the words from standard input
    (separated by spaces, commas or lines; a debugger's '$1 = ' and braces dropped; a token
    ending in ':', a dump's address, skipped). A token of standard input that is no integer is
    reported with its line and the rest decoded; the exit status is then 2, else the worst of
    the words'.

    \b
    Which layout:
      --as idesc --kind K   the instruction descriptor under .kind::K
      --as idesc            under every kind; says which kinds the word is consistent with
                            (no error finding): full decode for those, the first error for
                            the others
      --as smem | zcm       the shared memory / zero-column mask descriptor
                            (zcm: --m/--n add the generated mask)
      --as wgmma_smem       Hopper's wgmma (sm_90a) shared memory descriptor (also: --arch sm_90a)
      --as taddr            a tensor memory address (lane, column; --warp,
                            --alloc-columns, --alloc-base add their rules)
      (no --as)             a word below 2**32 is an idesc, or a tensor memory address where
                            no kind reads it and it is a valid one (--warp, --alloc-columns,
                            --alloc-base: read as one); a wider word is decoded as
                            smem, wgmma_smem and zcm and the consistent ones are shown, fewest
                            findings first, with why it is one shared memory family's or the
                            other's (families=)
    On a terminal, several readings are listed one line each, then the best one in full
    (--all: every reading in full, and the first error of every other one).

    \b
    Context: the options of descgen validate (--cta-group, --ws/--no-ws, --sp/--no-sp,
    --scale-vec, --a-tmem/--no-a-tmem, --arch for an idesc; --arch, --pattern-start for smem;
    --m, --n, --ws/--no-ws for zcm) add the rules that need them, so that 'consistent' takes
    the instruction into account (decode 0x08400010 --arch sm_100f). -v lists the rules not
    checked for want of context.

    \b
    Piped output (or --plain): key=value lines, greppable:
      descriptor=  layout=  kind=  word=  ok=true|false
      FIELD=VALUE              every field in bit order: logical values (bytes, rows,
                               columns, type names); raw bits for reserved/constant
                               fields; ? for an unknown code
      derived.NAME=VALUE       values implied by the fields (derived.k=16)
      finding=SEVERITY CODE: FIELD = VALUE: rule (allowed: ...) [PTX source]
      not_checked=CODE needs=NAME,...: rule [source]   (with -v)
      mask=0x...  mask.submask_I=0x...   (zcm with --m/--n)
    When several layouts are tried, every line starts with the kind or descriptor
    (f16.n=256); 'consistent=' lists the consistent ones and KIND.first_error= gives
    the first error of each other one. --json adds "not_checked" to each result.

    Exits 1 (after printing) when the decode has an error finding, or when no kind /
    descriptor is consistent.
    """
    values, unread = _words(words)
    status = EXIT_USAGE if unread else EXIT_OK
    for i, word in enumerate(values):
        if i and not (out.json or short):
            echo()
        if short:
            status = max(status, _decode_short(word, as_, kind, context, out.json))
        else:
            status = max(status, _decode(out, word, as_, kind, mask_m, mask_n, context, verbose, show_all))
    return status


#: A debugger's value-history prefix: cuda-gdb's and gdb's ``$1 = 0x08400010``.
_GDB_VALUE = re.compile(r"^\s*\$\d+\s*=\s*")


def _stdin_tokens(text: str) -> list[tuple[int, str]]:
    """The word tokens of standard input with their line numbers: separated by spaces, commas or
    lines; a debugger's ``$1 = `` prefix and an array's braces (``$2 = {0x1, 0x2}``) dropped, a
    token ending in ``:`` (a dump's address) skipped."""
    return [(n, t) for n, line in enumerate(text.splitlines(), 1)
            for t in _GDB_VALUE.sub("", line).translate(_SEPARATORS).split() if not t.endswith(":")]


_SEPARATORS = str.maketrans(",{}", "   ")


def _words(given: tuple[str, ...]) -> tuple[list[int], int]:
    """The words of ``descgen decode``'s arguments, ``-`` read from standard input
    (:func:`_stdin_tokens`), and how many input tokens could not be read. Every word is read
    before anything is printed. A malformed argument is a usage error naming ``WORD...``; a
    malformed token of standard input costs only itself: it is reported on stderr with its line
    (``error: stdin line 3: ...``) and the others are decoded (the exit status is then 2). The
    notes of the words read (hex without ``0x``) go to stderr when all are read."""
    notes: list[str] = []
    words: list[int] = []
    bad = 0
    for arg in given:
        if arg != "-":
            try:
                words.append(WORD.read(arg, "words", notes.append))
            except ValueError as e:
                raise usage_error(str(e), param_hint="'WORD...'") from None
            continue
        for line, token in _stdin_tokens(sys.stdin.read()):
            try:
                words.append(WORD.read(token, "words", notes.append))
            except ValueError as e:
                notes.append(f"error: stdin line {line}: {e}")
                bad += 1
    for note in notes:
        echo(note, err=True)
    if not words and not bad:
        raise usage_error("no word to decode (standard input was empty)")
    return words, bad


def _decode_short(word: int, as_: descgen.Descriptor | None, kind: descgen.Kind | None, context: dict[str, Any],
                  as_json: bool) -> int:
    """``--short``: one line, ``WORD  READING(S)  key fields; findings``: the consistent readings
    (several: the best one's fields, the others named) or, with none, the best one and its errors.
    With ``--json``, the same as one compact JSON object per line (JSON lines): the envelope's
    ``descgen`` and ``command``, then ``word``, ``reading``, ``consistent``, ``runtime`` (CUTLASS's
    64-bit idesc), ``fields`` and ``findings`` (severity, code, field, message)."""
    from descgen.words.identify import identify, key_fields

    if kind is not None:
        as_ = "idesc"
    if wgmma_arch(context) and as_ in (None, "wgmma_smem"):  # --arch sm_90a: Hopper's word, as the full decode reads it
        as_, context = "wgmma_smem", {**context, "arch": None}
    # each reading's context (a bare word: those of every reading tried; the rest does not apply to it)
    applies = ((as_,) if as_ is not None else ("idesc", "taddr") if word < 1 << 32 else ("smem", "wgmma_smem", "zcm"))
    found = identify(word, descriptor=as_, kind=kind,
                     **{k: v for k, v in context.items() if v is not None and any(k in APPLIES[a] for a in applies)})
    best = found.best
    names = [r.name for r in found.consistent] or [best.name]
    d = best.decoded
    if as_json:
        import json

        echo(json.dumps({"descgen": ENVELOPE_VERSION, "command": "decode", "short": True,
                         "word": word_as(word, best.descriptor), "reading": best.name,
                         "consistent": [r.name for r in found.consistent], "ok": best.ok,
                         "runtime": best.runtime.as_dict() if best.runtime else None, "fields": d.values(),
                         "findings": [{"severity": f.severity, "code": f.code, "field": f.field, "message": str(f)}
                                      for f in d.findings]}, separators=(",", ":"), default=str))
        return EXIT_OK if best.ok else EXIT_RULE
    shown = names[0] + (f" (also {', '.join(names[1:])})" if len(names) > 1 else "")
    findings = "; ".join(f"{f.severity} {f.code}" for f in d.findings) or "no findings"
    runtime = f" [runtime form: idesc {best.runtime.idesc:#010x}]" if best.runtime else ""
    echo(f"{word_as(word, best.descriptor)}  {shown}{runtime}: {key_fields(d)}; {findings}")
    return EXIT_OK if best.ok else EXIT_RULE


def _decode(out: Output, word: int, as_: descgen.Descriptor | None, kind: descgen.Kind | None, mask_m: int | None,
            mask_n: int | None,
            context: dict[str, Any], verbose: bool, show_all: bool) -> int:
    """One word of ``descgen decode``; its exit status."""
    check_mn(mask_m, mask_n)
    out.input = {"word": None, "as": as_, "kind": kind, "m": mask_m, "n": mask_n, **context}
    if kind is not None:
        if as_ not in (None, "idesc"):
            raise usage_error(f"--kind applies to instruction descriptors, not --as {as_}")
        as_ = "idesc"
    if wgmma_arch(context):  # --arch sm_90a: the wgmma shared memory descriptor, the target's only word
        if as_ not in (None, "wgmma_smem"):
            raise usage_error(f"--arch {context['arch']} reads the wgmma shared memory descriptor, not --as {as_}")
        as_, context = "wgmma_smem", {**context, "arch": None}
    if mask_m is not None and as_ in ("idesc", "smem", "taddr", "wgmma_smem"):
        raise usage_error(f"--m/--n select the zero-column mask; they do not apply to --as {as_}")
    chosen: str = as_ or ("idesc" if word < 1 << 32 else "smem+zcm")  # what is shown
    if as_ is None and chosen == "idesc" and mask_m is not None:
        raise usage_error("a word below 2**32 decodes as an idesc; add --as zcm to see its mask")
    bare32 = as_ is None and chosen == "idesc"  # an idesc under every kind, or a tensor memory address
    hint = ""
    if bare32:  # the descriptors whose rules take what was given
        extra = [n for n, v in context.items() if v is not None and n not in APPLIES["idesc"] + APPLIES["taddr"]]
        fits = [d for d in ("smem", "wgmma_smem", "zcm") if any(n in APPLIES[d] for n in extra)] or ["smem", "zcm"]
        hint = ("; a word below 2**32 decodes as an idesc or a tensor memory address, "
                f"add {' or '.join('--as ' + d for d in fits)}")
    check_applies(context, ("smem", "zcm") if chosen == "smem+zcm" else ("idesc", "taddr") if bare32 else chosen,
                  hint=hint)
    if bare32:
        only = {w: [n for n in APPLIES[w] if context.get(n) is not None and n not in APPLIES[o]]
                for w, o in (("idesc", "taddr"), ("taddr", "idesc"))}
        if only["idesc"] and only["taddr"]:
            raise usage_error(f"{', '.join(map(option_name, only['idesc']))} is an instruction descriptor's context "
                              f"and {', '.join(map(option_name, only['taddr']))} a tensor memory address's: no reading "
                              "of the word takes both; add --as idesc or --as taddr")
    out.input["word"] = word_as(word, chosen)
    ctx = {**context, "m": mask_m, "n": mask_n}

    from descgen.words.identify import identify  # loaded by the commands that read bare words (start-up)

    found = identify(word, descriptor=as_ if kind is None else "idesc", kind=kind, **ctx)
    by_name = {r.name: r for r in found.readings}
    runtime = None
    if chosen == "idesc":
        first = found.best
        # no kind reads it and it is a valid tensor memory address, or its context says so
        if first.descriptor == "taddr":
            if not out.json:
                why = ("no .kind reads it as an instruction descriptor without an error" if len(found.readings) > 1 else
                       "its context ("
                       + ", ".join(option_name(n) for n in APPLIES["taddr"] if context.get(n) is not None)
                       + ") is a tensor memory address's")
                echo(f"note: {word_as(word, 'taddr')} read as a tensor memory address (lane, column): {why} "
                     "(--as idesc shows the kinds)", err=True)
            out.input["as"] = "taddr"
            return _show_one(out, first.report, "taddr", verbose)
        runtime = first.runtime.as_dict() if first.runtime else None
        if kind is not None:
            return _show_one(out, first.report, "idesc", verbose, runtime=runtime)
        reports: dict[str, descgen.Report] = {k: by_name[k].report for k in descgen.KINDS}
        return _show_many(out, word, "kind", reports, "idesc", verbose, full_when_none=False, runtime=runtime,
                          show_all=show_all)
    if chosen in ("smem", "taddr", "wgmma_smem"):
        return _show_one(out, found.best.report, chosen, verbose)
    if chosen == "zcm":
        report = found.best.report
        return _show_one(out, report, "zcm", verbose, _mask(word, mask_m, mask_n, report))
    # smem+zcm: every 64-bit reading, and CUTLASS's runtime instruction descriptor where the word
    # is one, consistent with these kinds (E31)
    reports = {"smem": by_name["smem"].report, "wgmma_smem": by_name["wgmma_smem"].report, "zcm": by_name["zcm"].report}
    kinds = [r.kind for r in found.readings if r.descriptor == "idesc" and r.kind is not None]
    if kinds:
        first_idesc = by_name[kinds[0]]
        reports["idesc"] = first_idesc.report
        runtime = {**first_idesc.runtime.as_dict(), "kinds": kinds} if first_idesc.runtime else None
    return _show_many(out, word, "descriptor", reports, None, verbose, full_when_none=True,
                      mask=_mask(word, mask_m, mask_n, reports["zcm"]), runtime=runtime, show_all=show_all,
                      families=found.why)


def _mask(word: int, m: int | None, n: int | None, report: descgen.Report) -> dict[str, Any] | None:
    """The mask for --m/--n, or None when M itself breaks a rule (the finding says so)."""
    if m is None or n is None or any(f.code == "ZCM-M" for f in report.findings):  # (check_mn: both or neither)
        return None
    return mask_info(word, m, n)  # N that does not split into the sub-masks: usage error


def _result(d: descgen.Decoded, report: descgen.Report) -> dict[str, Any]:
    return {**d.as_dict(), "not_checked": [n.as_dict() for n in report.not_checked]}


def _plain_not_checked(report: descgen.Report, prefix: str = "") -> list[str]:
    return [f"{prefix}not_checked={n.code} needs={','.join(n.missing)}: {n.rule} [{n.source}]"
            for n in report.not_checked]


def _runtime_lines(runtime: dict[str, Any] | None, prefix: str = "") -> list[str]:
    """``runtime.note=...`` lines: how a 64-bit CUTLASS runtime instruction descriptor was read."""
    if not runtime:
        return []
    return [f"{prefix}runtime.{key}={','.join(value) if isinstance(value, list) else value}"
            for key, value in runtime.items() if key != "word"]


def _runtime_note(runtime: dict[str, Any] | None, prefix: str = "") -> None:
    """Above a table: the note, on stdout like the table."""
    if runtime:
        kinds = f"; consistent with .kind::{', .kind::'.join(runtime['kinds'])}" if runtime.get("kinds") else ""
        echo(f"note: {prefix}{runtime['word']} {runtime['note']}{kinds}")


def _show_one(out: Output, report: descgen.Report, role: str, verbose: bool, mask: dict[str, Any] | None = None,
              *, runtime: dict[str, Any] | None = None) -> int:
    d = report.decoded[role]
    if out.json:
        out.emit_json(result=_result(d, report), **({"mask": mask} if mask else {}),
                      **({"runtime": runtime} if runtime else {}))
    elif out.table:
        _runtime_note(runtime)
        renderer().decoded(d, mask=mask, not_checked=report.not_checked if verbose else None)
    else:
        out.lines(_runtime_lines(runtime))
        out.lines(plain_decoded(d))
        if verbose:
            out.lines(_plain_not_checked(report))
        if mask:
            out.lines(plain_mask(mask))
    return EXIT_OK if d.ok else EXIT_RULE


def _show_many(out: Output, word: int, label: str, reports: dict[str, descgen.Report], role: str | None, verbose: bool,
               *, full_when_none: bool, mask: dict[str, Any] | None = None, runtime: dict[str, Any] | None = None,
               show_all: bool = False, families: tuple[str, ...] = ()) -> int:
    results = {name: r.decoded[role or name] for name, r in reports.items()}
    # Best first: no error, then fewest findings (a zcm word also passes as smem, with a
    # warning on the smem's fixed bits 46-48, so it is listed after zcm).
    consistent = sorted((name for name, d in results.items() if d.ok), key=lambda name: len(results[name].findings))
    full = consistent or (list(results) if full_when_none else [])
    if out.json:
        out.emit_json(consistent=consistent, results={name: _result(d, reports[name]) for name, d in results.items()},
                      **({"mask": mask} if mask else {}), **({"runtime": runtime} if runtime else {}),
                      **({"families": list(families)} if families else {}))
    elif out.table:
        _runtime_note(runtime, "idesc: " if label == "descriptor" else "")
        not_checked = {name: r.not_checked for name, r in reports.items()} if verbose else None
        renderer().decoded_many(word, label, results, consistent, full, mask=mask, not_checked=not_checked,
                               show_all=show_all)
        if "wgmma_smem" in consistent:  # which shared memory descriptor family (tcgen05 or wgmma), and why
            for line in families:
                echo(f"note: {line}")
    else:
        width = next(iter(results.values())).width
        lines = [f"word={hex_word(word, width)}", f"consistent={','.join(consistent)}"]
        lines += _runtime_lines(runtime, "idesc." if label == "descriptor" else "")
        lines += [f"families={line}" for line in families]
        for name in full + [n for n in results if n not in full]:
            d = results[name]
            if name in full:
                lines += plain_decoded(d, prefix=f"{name}.")
                if verbose:
                    lines += _plain_not_checked(reports[name], prefix=f"{name}.")
            else:
                lines.append(f"{name}.first_error={d.errors[0]}")
        out.lines(lines)
        if mask:
            out.lines(plain_mask(mask))
    return EXIT_OK if consistent else EXIT_RULE
