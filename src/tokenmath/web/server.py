"""Serving the app with uvicorn on a socket this module binds: loopback unless another host is asked for.

The socket is bound before uvicorn starts, so a busy port or an unknown host is one clear error, port 0
picks a free port, and the URL printed (and opened in the browser) is the real one.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import sys
import threading
import webbrowser
from typing import Callable, Iterator

import uvicorn

from ..core.errors import InputError
from .app import create_app

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "is_loopback", "exposure_warning", "bind", "url_of", "serve_page",
           "running"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8321


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, port: int) -> str | None:
    """The warning printed when the page is served beyond this machine (it has no login)."""
    if is_loopback(host):
        return None
    return (f"serving on {host}, not loopback: anyone who can reach this machine on port {port} can use the page and "
            f"its API (there is no login); the default --host {DEFAULT_HOST} keeps it to this machine")


def bind(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> socket.socket:
    """A listening TCP socket on (host, port); one-line errors for a bad port, an unknown host, a busy port."""
    if not 0 <= port <= 65535:
        raise InputError(f"--port must be 0–65535 (got {port}); 0 picks a free one")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise InputError(f"--host {host!r}: {e.strerror}") from None
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as e:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror}; try another --port (0 picks a free one)") \
            from None
    sock.listen(128)
    return sock


def url_of(sock: socket.socket) -> str:
    """The URL to open on this machine (a wildcard address is reached through loopback)."""
    host, port = sock.getsockname()[:2]
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def _has_screen() -> bool:
    """Without one, `webbrowser` would start a text browser in this very terminal: print the URL only."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _server() -> uvicorn.Server:
    return uvicorn.Server(uvicorn.Config(create_app(), log_level="warning", access_log=False))


def serve_page(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, open_browser: bool = True,
               echo: Callable[[str], None] = print, warn: Callable[[str], None] = print) -> None:
    """Bind, print the URL, open the browser (unless told not to) and serve until interrupted."""
    sock = bind(host, port)
    w = exposure_warning(host, sock.getsockname()[1])
    if w:
        warn(w)
    url = url_of(sock)
    echo(f"tokenmath web: {url}  (Ctrl-C stops it)")
    if open_browser and _has_screen():
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    with sock:
        _server().run(sockets=[sock])


@contextlib.contextmanager
def running(host: str = DEFAULT_HOST, port: int = 0) -> Iterator[str]:
    """Serve in a background thread for as long as the block runs; yields the URL (for tests and scripts)."""
    sock = bind(host, port)
    server = _server()
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started and thread.is_alive():
            threading.Event().wait(0.02)
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
