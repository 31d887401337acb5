"""The README is executable documentation: its commands run and its examples hold."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import descgen

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_the_two_commands() -> None:
    first, second = blocks("sh")[:2]
    assert "pip install ." in first and first.strip().endswith("descgen idesc --kind f16 --m 128 --n 256")
    assert "pip install -e '.[test]'" in second and second.strip().endswith("pytest")
    # Nothing but the title and these two blocks comes before them.
    assert README.index(first) < README.index("descgen encodes")


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    test_command = blocks("sh")[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci.splitlines()


def test_readme_python_examples_hold() -> None:
    """Each ``expression  # literal`` line in the README's Python block evaluates to the literal."""
    code = blocks("python")[0]
    namespace: dict[str, object] = {}
    checked = 0
    lines = code.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        # Join continuation lines of a multi-line statement.
        stmt = line
        while stmt.count("(") > stmt.count(")"):
            i += 1
            stmt += "\n" + lines[i]
        i += 1
        body, _, comment = stmt.partition("  #")
        if body.startswith((" ", "try:", "except")) or not body.strip():
            continue  # the try/except example is checked by test_readme_error_example_message
        try:
            expected = ast.literal_eval(comment.strip())
        except (ValueError, SyntaxError):
            exec(body, {"descgen": descgen}, namespace)
            continue
        try:
            tree = ast.parse(body.strip(), mode="eval")
        except SyntaxError:
            exec(body, {"descgen": descgen}, namespace)
            continue
        got = eval(compile(tree, "README", "eval"), {"descgen": descgen}, namespace)
        assert got == expected, body
        checked += 1
    assert checked >= 6


def test_readme_error_example_message() -> None:
    with pytest.raises(descgen.EncodeError) as err:
        descgen.encode_idesc("i8", 128, 40)
    message = str(err.value)
    assert "n = 40" in message and "8..32 step 8, 48..256 step 16" in message and "IDESC-N-RANGE" in message
    assert ("n = 40: out of range for .kind::i8; bits 17-22 store N >> 3;"
            in README.replace("\n                  # ", " "))


def test_readme_defaults_table_matches_the_tables() -> None:
    rows = re.findall(r"^\| `(\w+)` \| (\w+) \|([^|]*)\|([^|]*)\|$", README, flags=re.M)
    assert {r[0] for r in rows} == set(descgen.KINDS)
    for kind, ab, dtype, scale in rows:
        word = descgen.encode_idesc(kind, 128, 64)
        d = descgen.decode_idesc(word, kind)
        assert d.value("atype") == ab and d.value("btype") == ab
        assert d.value("dtype") == ("f32" if "implied" in dtype else dtype.strip())
        assert ("implied" in dtype) == (kind.startswith("mx"))
        if scale.strip():
            assert d.value("scale_type") == scale.strip()


def readme_cli_commands() -> list[list[str]]:
    import shlex

    commands = []
    for block in blocks("sh")[2:]:
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("descgen "):
                commands.append(shlex.split(line)[1:])
    return commands


def test_every_readme_cli_command_runs() -> None:
    from click.testing import CliRunner

    from descgen.cli import cli

    commands = readme_cli_commands()
    assert len(commands) >= 8
    for args in commands:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)
        assert "Traceback" not in result.output


def test_readme_decode_sample_is_current() -> None:
    from click.testing import CliRunner

    from descgen.cli import cli

    sample = re.search(r"```text\n(.*?)```", README, flags=re.S).group(1)
    result = CliRunner().invoke(cli, ["decode", "0xc000401000010800", "--as", "smem", "--table"],
                                env={"COLUMNS": "110", "NO_COLOR": "1"})
    assert result.exit_code == 0
    got = [line.rstrip() for line in result.output.splitlines()]
    want = [line.rstrip() for line in sample.splitlines()]
    assert got == want


def test_readme_short_decode_answer_is_current() -> None:
    """The README shows the head of `descgen decode 0x08400010` on a terminal: the short answer."""
    from click.testing import CliRunner

    from descgen.cli import cli

    sample = next(b for b in blocks("text") if b.startswith("0x08400010 as an instruction descriptor"))
    result = CliRunner().invoke(cli, ["decode", "0x08400010", "--table"], env={"COLUMNS": "100", "NO_COLOR": "1"})
    got = [line.rstrip() for line in result.output.splitlines()]
    want = [line.rstrip() for line in sample.splitlines()]
    assert got[: len(want)] == want and got[len(want)] == ""


def _run_cli(args: list[str]) -> str:
    from click.testing import CliRunner

    from descgen.cli import cli

    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, (args, result.output)
    return result.output


def test_readme_emitted_excerpts_are_what_descgen_writes() -> None:
    """A code block after ``<!-- emitted by: descgen ... -->`` is a contiguous part of that
    command's output (the README's "In your kernel" section)."""
    import shlex

    found = re.findall(r"<!-- emitted by: descgen (.*?) -->\n```\w+\n(.*?)```", README, flags=re.S)
    assert found
    for command, block in found:
        assert block in _run_cli(shlex.split(command)), command


def test_readme_kernels_compile_with_the_emitted_headers(tmp_path: Path) -> None:
    """Each ```cuda block of "In your kernel" compiles (nvcc, sm_100a) with the headers its
    preceding ```sh block's commands write, each named by --name (idesc.hpp by default)."""
    import shlex
    import shutil
    import subprocess

    section = README[README.index("### In your kernel"):README.index("### Tensor memory addresses")]
    pairs = re.findall(r"```sh\n(.*?)```.*?```cuda\n(.*?)```", section, flags=re.S)
    assert len(pairs) == 2
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc")
    from standards import CPP_STANDARDS, stated

    for i, (commands, kernel) in enumerate(pairs):
        where = tmp_path / f"k{i}"
        where.mkdir()
        needs = []
        for line in commands.strip().splitlines():
            args = shlex.split(line)[1:]
            name = args[args.index("--name") + 1] if "--name" in args else "idesc"
            (where / f"{name}.hpp").write_text(_run_cli(args))
            needs.append(stated((where / f"{name}.hpp").read_text())[0])
        std = max(needs, key=CPP_STANDARDS.index)  # the standard the headers say they need: C++14
        assert std == "c++14", needs
        (where / "k.cu").write_text(kernel)
        for flags in ([], ["-DDESCGEN_DEBUG"]):
            r = subprocess.run(["nvcc", f"-std={std}", "-gencode=arch=compute_100a,code=sm_100a", "-rdc=true", *flags,
                                "-c", "k.cu", "-o", "k.o"], cwd=where, capture_output=True, text=True)
            assert r.returncode == 0, r.stderr


def test_readme_standards_table_is_what_the_outputs_state() -> None:
    """The README's table of standards ("Emitting code") names, per output, the standards the
    output's own first line states (tests/test_emit.py, test_descriptor_functions.py and
    test_cpp_header.py compile each there and check the one below refuses it)."""
    from standards import stated

    from descgen.backends.cpp_header import header

    table = README[README.index("| output | needs | because |"):]
    rows = [line.split("|")[2] for line in table.split("\n\n")[0].splitlines()[2:]]
    named = [[s.lower() for s in re.findall(r"C\+\+\d\d|C\d\d", row)] for row in rows]
    tile = descgen.smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=64, start_address=0)
    one_return = descgen.validate_idesc(descgen.encode_idesc("mxf8f6f4", 128, 256), "mxf8f6f4")
    d = descgen.decode_idesc(0x08400010, "f16")
    got = [[s for s in stated(descgen.emit(d, "c")) if s], [stated(descgen.emit(d, "cpp"))[0]],
           [stated(descgen.emit_functions(tile, "c"))[0]],
           [stated(descgen.emit_functions(tile, "cpp"))[0], stated(descgen.emit_functions(one_return, "cpp"))[0]],
           [stated(header())[0]]]
    assert named == got == [["c99", "c++11"], ["c++11"], ["c99"], ["c++14", "c++11"], ["c++17"]]
    assert "descgen header\n" in "".join(blocks("sh")) or any(line.split("  #")[0].strip() == "descgen header"
                                                              for b in blocks("sh") for line in b.splitlines())


def test_no_file_cites_an_issue_number() -> None:
    """The issue tracker is not part of the repository: a comment, docstring or page says what it
    means ("the first-hour fixes", "fail closed") instead of citing "issue NN", which no reader of
    the repository can open."""
    import subprocess

    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True)
    if files.returncode != 0:
        pytest.skip("not a git checkout")
    cited = re.compile(r"\b" + "iss" + r"ues? \d+\b", re.I)  # (in pieces: this file names none)
    found = []
    for name in files.stdout.split():
        path = ROOT / name
        if path.suffix in (".py", ".md", ".toml", ".sh", ".hpp", ".cu", ".ptx", "") and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}" for m in cited.finditer(text)]
    assert not found, found
