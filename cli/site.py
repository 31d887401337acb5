"""``descgen site DIR``: the static site that runs descgen in the browser, and the two entries the
page calls in Pyodide.

Registered on the group of :mod:`descgen.cli.app`; a thin renderer of
:func:`descgen.site.build.build_site` (what the site holds: its docstring, and README, "In the
browser"). In the page, :func:`run_piped` answers every request: it runs the command line as the
console script does, with stdout and stderr captured as when piped, so that the page's answers are
the command line's; :func:`command_options` describes a command's options for the page's forms.
"""

from __future__ import annotations

import gc
import io
import os
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import click

__all__ = ["site", "run_piped", "command_options"]


@click.command(short_help="Write a static web page that runs descgen in the browser (Pyodide).")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), metavar="DIR")
@click.option("--pyodide", "pyodide_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              metavar="DIR", help="A local Pyodide core, copied into the site: the npm package's folder "
                                  "(node_modules/pyodide after npm install pyodide@VERSION).")
@click.option("--pyodide-url", metavar="URL", help="Instead, load Pyodide from this URL (a CDN you accept, e.g. "
              "https://cdn.jsdelivr.net/pyodide/vVERSION/full/): the page then fetches it, and the packages the site "
              "lacks, from there.")
@click.option("--wheels", type=click.Path(exists=True, file_okay=False, path_type=Path), metavar="DIR",
              help="A folder of wheels for Pyodide to install as well (bitstring 4 and bitarray's wasm wheel, for the "
                   "terminal table: README, 'In the browser').")
def site(directory: Path, pyodide_dir: Path | None, pyodide_url: str | None, wheels: Path | None) -> None:
    """Write a static site into DIR that runs descgen itself in the browser (Pyodide): index.html
    and what it loads. Serve it from any static host, or offline: python -m http.server -d DIR.

    \b
    Where Pyodide comes from is yours to say, never a silent download:
      --pyodide DIR      a local copy of the npm package pyodide, copied into the site
      --pyodide-url URL  a URL the page loads it from
    descgen, click and rich (and rich's dependencies) come from this machine's install.

    Prints the folder and how to serve it, and on stderr a note naming what the site lacks."""
    from descgen.site.build import PYODIDE_VERSION, SiteError, build_site

    if pyodide_dir is None and pyodide_url is None:
        raise click.UsageError(f"give --pyodide DIR (a local Pyodide core: npm install pyodide@{PYODIDE_VERSION} "
                               "writes node_modules/pyodide) or --pyodide-url URL (a CDN you accept)")
    if pyodide_dir is not None and pyodide_url is not None:
        raise click.UsageError("--pyodide and --pyodide-url are mutually exclusive")
    try:
        built = build_site(directory, pyodide=pyodide_dir, pyodide_url=pyodide_url, wheels=wheels)
    except SiteError as e:
        raise click.UsageError(str(e)) from None
    if built.missing:
        lacks = ", ".join(f"{m.name} ({m.why})" for m in built.missing)
        served = f"; the page asks {built.pyodide} for them" if built.pyodide_version is None else ""
        click.echo(f"note: not in the site: {lacks}{served}. In the page, what imports them (the terminal table, "
                   "--table) fails as in an install without them; --wheels DIR adds wheels built for Pyodide.",
                   err=True)
    where = f"Pyodide {built.pyodide_version}" if built.pyodide_version else f"Pyodide from {built.pyodide}"
    click.echo(f"{directory}: {len(built.files)} files, {built.size / 1e6:.1f} MB ({where}); "
               f"serve it: python -m http.server -d {directory}")


def run_piped(argv: Sequence[str], stdin: str = "", env: Mapping[str, str] | None = None) -> tuple[str, str, int]:
    """``descgen ARGV`` as a shell runs it piped: (stdout, stderr, exit status).

    The console script's entry (:func:`descgen.cli.main`) runs with stdout and stderr written to
    UTF-8 buffers that are no terminal (stderr's errors backslash-replaced, as Python's own) and
    ``stdin`` as standard input; ``env`` is added to ``os.environ`` for the call; an exception
    that escapes (``--traceback``) is printed as the interpreter prints it, exit status 1. The collector's
    state, which :func:`descgen.cli.main` changes for a process that then exits, is restored."""
    from . import main

    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(out, encoding="utf-8", write_through=True),
               io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True),
               io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
    saved, collecting = (sys.stdout, sys.stderr, sys.stdin), gc.isenabled()
    environ = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    sys.stdout, sys.stderr, sys.stdin = streams
    status: int = 0
    try:
        main(list(argv))
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            status = e.code or 0
        else:  # sys.exit("message"), as the interpreter reports it
            print(e.code, file=sys.stderr)
            status = 1
    except Exception:  # (--traceback re-raises) the interpreter prints it and exits 1
        import traceback

        traceback.print_exc()
        status = 1
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved
        for stream in streams[:2]:  # (stdin's may be closed: batch reads it through a wrapper of its own)
            stream.flush()
            stream.detach()  # (the buffers stay open)
        for name, value in environ.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        gc.unfreeze()
        if collecting:
            gc.enable()
    return out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8"), status


def command_options(name: str) -> list[dict[str, Any]]:
    """The options of ``descgen NAME`` for a form: per option its flags (``--kind``; a boolean
    pair's both, ``--ws``/``--no-ws``), whether it is a flag, required, its choices (an empty
    list: free text), metavar, default and help, in the command's order."""
    from . import cli  # (the package's entry, as run_piped's main)

    with click.Context(cli) as ctx:
        command = cli.get_command(ctx, name)
        if command is None:
            raise click.UsageError(f"no command {name!r}")
        options = []
        for param in command.get_params(ctx):
            if not isinstance(param, click.Option) or param.hidden or not param.expose_value:  # (--help, --version)
                continue
            options.append({
                "name": param.name,
                "flags": [*param.opts, *param.secondary_opts],
                "flag": param.is_flag,
                "required": param.required,
                "choices": list(_choices(param.type)),
                "metavar": param.metavar or param.type.name.upper(),
                "default": param.default if isinstance(param.default, (str, int, bool)) else None,
                "help": param.help or "",
            })
    return options


def _choices(kind: Any) -> Sequence[str]:
    """A parameter type's values: click's and descgen's choices, the targets of ``--arch``."""
    if hasattr(kind, "targets"):
        return tuple(kind.targets())
    return tuple(str(c) for c in getattr(kind, "choices", ()) or ())
