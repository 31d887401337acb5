"""The click-free fast path (descgen.cli.fast) against click: one definition of the options (the
table generated from the click commands is current) and the same bytes on stdout and stderr and
the same exit status for every command line, the fast path answering the ones it is sure of and
handing the rest to click."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from descgen.cli import fast

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IDESC = ["idesc", "--kind", "f16", "--m", "128", "--n", "256"]
SMEM = ["smem", "--start-address", "0x400", "--lbo", "2048", "--sbo", "128", "--swizzle", "none"]
ZCM = ["zcm", "--skip-span", "1", "--use-span", "13", "--start-count", "1,3,5,7"]

#: (argv, whether the fast path answers it itself)
CASES: list[tuple[list[str], bool]] = [
    (IDESC, True),
    (IDESC + ["--table"], True),
    (IDESC + ["--json"], True),
    (IDESC + ["--plain"], True),
    (IDESC + ["--format", "hex"], True),
    (IDESC + ["--format=json"], True),
    (["idesc", "--kind=kind::f16", "--m=0x80", "--n=256u"], True),
    (["idesc", "--n", "128", "--cta-group", "2", "--m", "256", "--kind", ".kind::F16"], True),
    (["idesc", "--kind", "f8f6f4", "--m", "128", "--n", "128", "--atype", "E2M1", "--btype", "e2m1", "--table"], True),
    (IDESC + ["--a-major", "MN", "--b-major", "mn", "--negate-a", "--negate-b"], True),
    (["idesc", "--kind", "i8", "--m", "128", "--n", "256", "--saturate", "--dtype", "s32", "--json"], True),
    (["idesc", "--kind", "i8", "--m", "128", "--n", "256", "--negate-a"], True),  # breaks a rule: exit 1
    (["idesc", "--kind", "tf32", "--m", "64", "--n", "8", "--arch", "sm_100a", "-q"], True),
    (IDESC + ["--sparse", "--sparsity-selector", "1", "--sp", "--table"], True),
    (["idesc", "--kind", "mxf8f6f4", "--m", "128", "--n", "128", "--scale-type", "ue8m0", "--a-sf-id", "1",
      "--scale-vec", "1X", "--table"], True),
    (["idesc", "--kind", "mxf4nvf4", "--m", "128", "--n", "256", "--scale-vec", "2X"], True),
    (IDESC + ["--ws", "--max-shift", "8"], True),
    (IDESC + ["--no-ws", "--no-a-tmem", "--cta-group", "1", "--arch", "sm_103a", "--json"], True),
    (IDESC + ["--arch", "sm_90a"], False),  # a usage error (Hopper's target for a tcgen05 word): click says it
    (["idesc", "--kind", "f16", "--m", "128", "--n", "257"], True),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "257", "--json"], True),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "257", "--table"], True),
    (["idesc", "--kind", "f16", "--m", "96", "--n", "256", "--cta-group", "2", "--table"], True),
    (["idesc", "--kind", "f17", "--m", "128", "--n", "256"], False),
    (["idesc", "--kind", "f16", "--m", "128"], False),
    (["idesc", "--kind", "f16", "--m", "-1", "--n", "256"], False),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "0x1_0000_0000_0000_0000"], False),
    (IDESC + ["--bogus"], False),
    (IDESC + ["extra"], False),
    (IDESC + ["--"], False),
    (IDESC + ["--m", "64"], False),
    (IDESC + ["--ws", "--no-ws"], False),
    (IDESC + ["--negate-a=1"], False),
    (IDESC + ["--cta-group", "3"], False),
    (IDESC + ["--cta-group"], False),
    (IDESC + ["--atype", "bfloat16"], False),  # a note, then the answer
    (IDESC + ["--functions"], False),
    (IDESC + ["--json", "--table"], False),
    (IDESC + ["--name", "X"], False),
    (IDESC + ["--format", "cpp", "--name", "k_idesc"], False),
    (IDESC + ["-qv"], False),
    (["idesc", "--help"], False),
    (["idesc", "-h"], False),
    (["idesc"], False),
    (["--traceback"] + IDESC, False),
    (SMEM, True),
    (SMEM + ["--table"], True),
    (SMEM + ["--json", "--arch", "sm_100a"], True),
    (["smem", "--addr", "0x8000", "--lbo", "16", "--sbo", "256", "--swizzle", "32b", "--pattern-start", "0x8000"], True),
    (["smem", "--addr", "0x400", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B", "--arch", "sm_90a", "--table"], True),
    (["smem", "--addr", "0x400", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B", "--lbo-mode", "absolute",
      "--arch", "sm_103a"], True),
    (SMEM[:-2] + ["--swizzle", "128B", "--base-offset", "9"], True),  # breaks a rule: exit 1
    (["smem", "--tile", "128x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B", "--addr", "0x400"], True),
    (["smem", "--tile", "128x64", "--dtype", "bf16", "--major", "K", "--swizzle", "128B", "--addr", "0x400", "--json",
      "--atom-order", "k_first", "--pattern-start", "0x400"], True),
    (["smem", "--tile", "64x64", "--dtype", "f16", "--major", "k", "--swizzle", "128B", "--addr", "0x400",
      "--arch", "sm_90a"], True),
    (["smem", "--tile", "128x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B", "--addr", "0x400",
      "--table"], False),  # the tile's table is the layout module's (click)
    (["smem", "--tile", "128x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B", "--format", "cpp"], False),
    (["smem", "--tile", "128x64", "--dtype", "bf16", "--swizzle", "128B", "--addr", "0x400"], False),
    (SMEM + ["--tile", "128x64"], False),
    (SMEM + ["--dtype", "bf16"], False),
    (["smem", "--addr", "0x400", "--swizzle", "none"], False),
    (SMEM + ["--arch", "sm_90a", "--lbo-mode", "relative"], False),
    (SMEM[:-1] + ["64C"], False),
    (["zcm", "--skip-span", "1", "--use-span", "13"], True),
    (ZCM + ["--m", "32", "--n", "64"], True),
    (ZCM + ["--m", "32", "--n", "64", "--table"], True),
    (ZCM + ["--m", "32", "--n", "64", "--json"], True),
    (ZCM + ["--first-span", "1,0,1,0", "--no-nonzero-mask", "--ws", "--column-shift", "4"], True),
    (["zcm", "--skip-span", "0", "--use-span", "13"], True),
    (ZCM + ["--m", "32", "--n", "63"], True),
    (ZCM + ["--m", "32"], False),
    (["zcm", "--skip-span", "1", "--use-span", "13", "--start-count", "1,2"], False),
    (ZCM + ["--functions", "--format", "c"], False),
    (["decode", "0x08400010"], True),
    (["decode", "0x08400010", "--kind", "f16", "--table"], True),
    (["decode", "0x08400010", "--table", "--all"], True),
    (["decode", "--kind=f16", "0x08400010", "-v", "--json"], True),
    (["decode", "0x10400010", "--kind", "f16", "--cta-group", "1", "-v", "--table"], True),  # an error: exit 1
    (["decode", "0x08400010", "0x4000404000010040", "0xc000401000010800", "--short"], True),
    (["decode", "0x08400010", "0x4000404000010040", "0xffffffffffffffff", "--table"], True),  # worst status: 1
    (["decode", "08400490", "0840001000000000"], True),  # hex without 0x: the notes, then the answer
    (["decode", "0x0841049000000000", "--table"], True),  # CUTLASS's runtime form
    (["decode", "0x000C008007050301", "--as", "zcm", "--m", "32", "--n", "64", "--table"], True),
    (["decode", "0x4000404000010040", "--arch", "sm_90a", "--table"], True),
    (["decode", "0x007F01FF", "--as", "taddr", "--warp", "1", "--plain"], True),
    (["decode", "0x08400010", "--m", "32", "--n", "64"], False),  # a usage error of the body
    (["decode", "0x08400010", "--kind", "f16", "--pattern-start", "0x400"], False),
    (["decode", "0x08400010", "zzz"], False),
    (["decode", "0x08400010", "--kind", "f17"], False),
    (["decode", "0x08400010", "--", "0x08400010"], False),
    (["decode", "0x08400010", "-qv"], False),
    (["decode", "0x08400010", "-1"], False),
    (["decode", "--kind", "f16"], False),
    (["decode", "0x08400010", "-h"], False),
]


def _run(argv: list[str], entry: str) -> tuple[bytes, bytes, int, bool]:
    """stdout, stderr, exit status, and whether click was imported: ``entry`` ``fast`` is the
    console script's ``descgen.cli.main``, ``click`` the click application alone."""
    main = "from descgen.cli import main" if entry == "fast" else "from descgen.cli.app import main"
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.__stderr__.write('\\nCLICK=%d' % ('click' in sys.modules)))\n"
            f"{main}\nmain()\n")
    env = {**os.environ, "PYTHONPATH": REPO, "COLUMNS": "110", "PYTHONIOENCODING": "utf-8"}
    env.pop("_DESCGEN_COMPLETE", None)
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, env=env, timeout=120)
    err, _, flag = proc.stderr.rpartition(b"\nCLICK=")
    return proc.stdout, err, proc.returncode, flag == b"1"


def test_the_table_is_current() -> None:
    """cli/fast_spec.py is what the click commands say (regenerate: python -m descgen.cli.fast)."""
    with open(os.path.join(REPO, "cli", "fast_spec.py"), encoding="utf-8") as fh:
        assert fh.read() == fast.source(), "regenerate: PYTHONPATH=. python -m descgen.cli.fast > cli/fast_spec.py"


def test_the_table_reads_every_option() -> None:
    """Every option of the fast commands is in the table, with its spellings and its reader."""
    from descgen.cli.app import cli
    from descgen.cli.fast_spec import COMMANDS
    from descgen.cli.values import reader

    for name, command in COMMANDS.items():
        click_params = {p.name: p for p in cli.commands[name].params}
        assert [p[1] for p in command["params"]] == list(click_params)
        for param in command["params"]:
            p = click_params[param[1]]
            if param[0] == "argument":
                assert (p.nargs, param[2]) == (-1, p.required)
                continue
            assert param[2] == tuple(p.opts)
            if param[0] == "option":
                assert param[3] == p.required
                if param[5] != ("str",):
                    assert reader(param[5]).describe() == p.type.reader.describe()


@pytest.mark.parametrize("entries", [["fast", "click"]])
def test_both_paths_print_the_same(entries: list[str]) -> None:
    """Each command line gives the same stdout, stderr and exit status through the console
    script (fast path first) and through click alone; the fast path answers the lines it is sure
    of without importing click, and hands the others to click."""
    jobs = [(argv, entry) for argv, _ in CASES for entry in entries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda job: _run(*job), jobs))
    for i, (argv, answers) in enumerate(CASES):
        (out_f, err_f, code_f, click_f), (out_c, err_c, code_c, click_c) = results[2 * i], results[2 * i + 1]
        assert (out_f, err_f, code_f) == (out_c, err_c, code_c), argv
        assert click_c
        assert click_f != answers, (argv, "answered without click" if answers else "handed to click")
    statuses = {results[2 * i][2] for i in range(len(CASES))}
    assert statuses == {0, 1, 2}  # successes, rule violations and usage errors all compared


def test_a_usage_error_of_the_body_hands_over_before_printing(capsys: pytest.CaptureFixture[str]) -> None:
    """--functions without --format is the body's usage error: run returns None, having printed nothing."""
    assert fast.run(IDESC + ["--functions"]) is None
    assert fast.run(["decode", "0x08400010", "--m", "32", "--n", "64"]) is None  # a word below 2**32 has no mask
    assert fast.run(["decode", "0x08400010", "zzz"]) is None  # every word is read before anything is printed
    assert fast.run(["validate", "0x08400010"]) is None  # not a fast command
    out = capsys.readouterr()
    assert (out.out, out.err) == ("", "")


def test_decode_of_standard_input_is_clicks() -> None:
    """``decode -`` is handed to click before standard input is read (a hand-over after reading
    it would find it empty): both paths print the same answer for the same input."""
    env = {**os.environ, "PYTHONPATH": REPO, "COLUMNS": "110", "PYTHONIOENCODING": "utf-8"}
    dump = b"0x7f00: 0x08400010, 0x4000404000010040\n"
    answers = [subprocess.run([sys.executable, "-c", f"from {m} import main\nmain()", "decode", "-", "--short"],
                              input=dump, capture_output=True, env=env, timeout=120)
               for m in ("descgen.cli", "descgen.cli.app")]
    assert [(a.stdout, a.stderr, a.returncode) for a in answers] == [(answers[1].stdout, b"", 0)] * 2
    assert answers[0].stdout.decode().splitlines()[1].startswith("0x4000404000010040  smem")


def _loaded_at_exit(argv: list[str]) -> dict[str, object]:
    """What the console script's process holds when it exits: the modules of interest, and
    whether it froze its objects out of the final collections' sight."""
    code = ("import atexit, gc, json, sys\n"
            "atexit.register(lambda: sys.__stderr__.write('\\nAT-EXIT=' + json.dumps({"
            "'rich.table': 'rich.table' in sys.modules, 'rich.console': 'rich.console' in sys.modules, "
            "'click': 'click' in sys.modules, 'dataclasses': 'dataclasses' in sys.modules, "
            "'bitstring': 'bitstring' in sys.modules, 'frozen': gc.get_freeze_count() > 0})))\n"
            "from descgen.cli import main\nmain()\n")
    env = {**os.environ, "PYTHONPATH": REPO, "COLUMNS": "110", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, env=env, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    import json

    return json.loads(proc.stderr.rpartition(b"\nAT-EXIT=")[2])  # type: ignore[no-any-return]


def test_a_word_drawn_on_a_terminal_loads_only_what_it_draws() -> None:
    """The encoders' table (the start-up figure of bench/bench.py) draws its lines with rich's
    console and text alone: rich's Table (and the fractions and decimal modules under it) loads
    only for a view that uses one, such as a finding's block. bitstring loads with the bit
    diagram a drawn word ends with (its digits are the word's Bits), never for piped or JSON
    output. Every command freezes its objects before exit: the interpreter's final collections
    would otherwise walk all of them."""
    drawn = {"rich.console": True, "click": False, "dataclasses": True, "bitstring": True, "frozen": True}  # rich loads dataclasses
    assert _loaded_at_exit(IDESC + ["--table"]) == {**drawn, "rich.table": False}
    assert _loaded_at_exit(["decode", "0x08400010", "0x4000404000010040", "--table"]) == {**drawn, "rich.table": False}
    warned = _loaded_at_exit(IDESC + ["--max-shift", "8", "--no-ws", "--table"])  # a warning's block: a grid
    assert warned == {**drawn, "rich.table": True}
    # piped: neither rich nor dataclasses (and its inspect), which descgen's records replace
    piped = {"rich.table": False, "rich.console": False, "click": False, "dataclasses": False, "bitstring": False,
             "frozen": True}
    assert _loaded_at_exit(IDESC) == piped
    assert _loaded_at_exit(["decode", "0x08400010", "0x4000404000010040"]) == piped
    assert _loaded_at_exit(["decode", "0x08400010", "--short"]) == piped
    for json_out in (["decode", "0x08400010", "--json"], IDESC + ["--json"]):  # JSON: no diagram, no Bits
        assert _loaded_at_exit(json_out)["bitstring"] is False, json_out
    assert _loaded_at_exit(["validate", "0x08400010", "--kind", "f16"])["frozen"] is True  # through click
