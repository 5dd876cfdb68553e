"""The local web page of `tokenmath web`: a FastAPI app (app.py) whose JSON API mirrors the CLI (api.py),
uploaded config.json files held in memory (uploads.py), and the server that binds loopback (server.py).

Needs the `web` extra (`pip install 'tokenmath[web]'`); nothing outside this package imports it.
"""

__all__: list[str] = []
