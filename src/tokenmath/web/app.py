"""The FastAPI application behind `tokenmath web`: the page at `/`, the JSON API under `/api/`.

Every error a user can cause is a 4xx with a one-line JSON body `{"error": "..."}` — the same line the
CLI prints — never a traceback. The page's JavaScript, Plotly included, ships in `static/`, so the page
works offline; the OpenAPI schema is at `/openapi.json` (no Swagger UI: it would load from a CDN).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from .. import __version__
from ..cli.cmd_catalog import entry_json
from ..cli.common import jsonable, user_error
from ..core.errors import InputError
from ..core.records import ENGINES
from ..core.roofline import BASES
from ..core.units import PRECISION_BYTES
from .api import ENDPOINTS, Endpoint, answer, query_parameters
from .uploads import MAX_UPLOAD_BYTES, Uploads

__all__ = ["create_app", "STATIC"]

STATIC = Path(__file__).parent / "static"


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status)


def create_app() -> FastAPI:
    app = FastAPI(title="tokenmath", version=__version__, docs_url=None, redoc_url=None,
                  description="The roofline math of LLM serving and training, one endpoint per CLI command: "
                              "the same options, checks and numbers as `tokenmath COMMAND --json`.")
    uploads = Uploads()
    app.state.uploads = uploads

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        err = exc.errors()[0]
        where = err["loc"][-1] if err.get("loc") else "request"
        got = f" (got {err['input']!r})" if "input" in err and not isinstance(err["input"], (dict, list)) else ""
        if err.get("type") == "missing":  # the CLI's words, the web's names
            return _error(422, f"Missing option '{where}'")
        return _error(422, f"Invalid value for '{where}': {err['msg']}{got}")

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException):
        return _error(exc.status_code, exc.detail)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):  # a bug: still one line, never a traceback
        return _error(500, f"internal error ({type(exc).__name__}); the server log has the details")

    for ep in ENDPOINTS:
        _add_endpoint(app, ep, uploads)

    @app.post("/api/models", tags=["models"], summary="Upload a Hugging Face config.json (read in memory, not stored)",
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": {"type": "object"}}}}})
    async def upload_model(request: Request) -> dict:
        """The config.json's bytes as the body (at most 256 KiB). Answers the model's name, which every endpoint
        then takes as `model=`, and its fields as `catalog show` prints them."""
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_UPLOAD_BYTES:
            return _error(413, f"config.json of {int(declared):,} bytes: at most {MAX_UPLOAD_BYTES:,}")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_UPLOAD_BYTES:
                return _error(413, f"config.json larger than {MAX_UPLOAD_BYTES:,} bytes")
        return _answered(lambda: jsonable({"model": (m := uploads.add(body)).name, **entry_json("models", m)}))

    @app.get("/api/options", tags=["page"], summary="Choices the page offers (precisions, bases, engines, uploads)")
    def options() -> dict:
        return {"precisions": list(PRECISION_BYTES), "bases": list(BASES), "engines": list(ENGINES),
                "uploads": uploads.names(), "max_upload_bytes": MAX_UPLOAD_BYTES}

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def _answered(make):
    """The JSON `make()` returns, or the 400 of an error the user caused (a bug propagates: a 500)."""
    try:
        return make()
    except Exception as e:
        msg = user_error(e)
        if msg is None:
            raise
        return _error(400, msg)


def _unknown(request: Request, known: list[str]) -> None:
    """Refuse a query parameter the command has no option for, as the CLI refuses an option it does not know (a
    misspelt or missing option answered with the defaults' numbers, silently, before)."""
    for name in request.query_params:
        if name not in known:
            raise InputError(f"No such option: {name} (possible options: {', '.join(known)})")


def _add_endpoint(app: FastAPI, ep: Endpoint, uploads: Uploads) -> None:
    """GET /api/<path> with the command's options as its query parameters."""
    import inspect

    opts = query_parameters(ep)
    known = [o.query for o in opts]

    def endpoint(_request: Request, **query) -> dict:
        return _answered(lambda: _unknown(_request, known) or answer(ep, query, uploads))

    request = inspect.Parameter("_request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request)
    endpoint.__signature__ = inspect.Signature([request] + [o.parameter() for o in opts])  # type: ignore[attr-defined]
    endpoint.__name__ = "api_" + ep.path.replace("/", "_")
    doc = (ep.callback.__doc__ or "").strip()
    app.get(f"/api/{ep.path}", tags=["commands"], summary=f"tokenmath {' '.join(ep.command)} --json",
            description=doc)(endpoint)
