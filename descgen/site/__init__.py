"""descgen in the browser: a static site that runs descgen itself in the page through Pyodide.

:func:`~descgen.site.build.build_site` (``descgen site DIR``) writes the page (``static/``: the
HTML, script and style sheet, package data), the pure-Python distributions descgen runs on as one
archive, wheels built for Pyodide where given, and the Pyodide core from a local copy of the npm
package ``pyodide`` (or the URL of one the user accepts). Nothing is downloaded while building.
The page answers every request by running the command line (``descgen.cli.site.run_piped``), so
its answers are the command line's.
"""

from __future__ import annotations
