"""`tokenmath web [--port P] [--host H] [--no-browser]`: the blackboard as a local page with live plots.

Serves on 127.0.0.1 unless another host is asked for (then it warns: the page has no login). Needs the
`web` extra; FastAPI and uvicorn are imported only when the command runs.
"""

from __future__ import annotations

import typer

from .common import console, err_console, fail, guard


def register(app: typer.Typer) -> None:
    @app.command("web")
    @guard
    def web_cmd(
        port: int = typer.Option(8321, "--port", help="TCP port (0 picks a free one)."),
        host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on; anything but loopback "
                                 "exposes the page to the network (a warning says so)."),
        no_browser: bool = typer.Option(False, "--no-browser", help="Do not open a browser tab."),
    ) -> None:
        """A local page: step-time terms, B*, cost and latency vs batch and context, the frontier, each number
        one click from its derivation; a JSON API mirroring these commands at /api/ (OpenAPI: /openapi.json)."""
        try:
            from ..web.server import serve_page
        except ImportError as e:
            fail(f"tokenmath web needs the web extra: pip install 'tokenmath[web]' (missing {e.name})")
        serve_page(host, port, open_browser=not no_browser,
                   echo=lambda s: console.print(s, markup=False),
                   warn=lambda s: err_console.print(f"warning: {s}", markup=False))
