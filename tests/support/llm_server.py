"""A scripted OpenAI-compatible server, so tests drive the real openai client over real HTTP.

Mocking the SDK would test our guess of what it does; this server lets the SDK do its own
parsing, retrying and timing out, and scripts the server's side: an answer, an error
status, a body that is not JSON, a reply too slow or too long. Stdlib only, on an
ephemeral port of 127.0.0.1:

    with ScriptedServer([status(429, headers=FAST_RETRY), text("```python\\nx = 1\\n```")]) as server:
        LLM(LLMConfig(base_url=server.base_url, model="m", api_key="k"), None).complete(...)
        server.requests  # [(headers, body), ...] as received

A list script is consumed in order and its last entry repeats; a callable script is
called with each request's JSON body and returns the reply.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union

# openai honours a Retry-After only when it is > 0 (0 falls back to its 0.5 s-and-up
# backoff); a millisecond asked for in retry-after-ms keeps retrying tests fast.
FAST_RETRY: Mapping[str, str] = {"retry-after-ms": "1"}
MODEL = "scripted-model"


@dataclass(frozen=True)
class Text:
    """A chat.completion whose first choice says `content`; `usage=False` leaves usage out."""

    content: str
    prompt_tokens: int = 10
    completion_tokens: int = 20
    usage: bool = True


@dataclass(frozen=True)
class Status:
    """An error status (429, 500, 401, ...) with an OpenAI-style error body by default."""

    code: int
    body: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Malformed:
    """200 with a body that is not JSON, under a content type that may claim it is."""

    body: str = '{"id": "chatcmpl-broken", "choices": [{'
    content_type: str = "application/json"


@dataclass(frozen=True)
class RawJson:
    """200 with this JSON body as is: valid JSON of the wrong shape (no choices, no content)."""

    body: Any


@dataclass(frozen=True)
class Slow:
    """Waits `seconds` (cut short when the server stops), then answers `then`."""

    seconds: float
    then: Reply


Reply = Union[Text, Status, Malformed, RawJson, Slow]
Script = Union[list[Reply], Callable[[Any], Reply]]


def text(content: str, prompt_tokens: int = 10, completion_tokens: int = 20, *, usage: bool = True) -> Text:
    return Text(content, prompt_tokens, completion_tokens, usage)


def status(code: int, body: str | None = None, headers: Mapping[str, str] | None = None) -> Status:
    return Status(code, body, dict(headers or {}))


def malformed(body: str = Malformed.body, content_type: str = Malformed.content_type) -> Malformed:
    return Malformed(body, content_type)


def raw_json(body: Any) -> RawJson:
    return RawJson(body)


def slow(seconds: float, then: Reply | None = None) -> Slow:
    return Slow(seconds, then if then is not None else text("slow answer"))


def huge(n_chars: int) -> Text:
    """A text answer of exactly `n_chars` characters (a model stuck repeating itself)."""
    line = "x = x + 1  # again\n"
    return Text((line * (n_chars // len(line) + 1))[:n_chars])


class ScriptedServer:
    """Serves POST /v1/chat/completions from a script and GET /v1/models; records requests.

    `requests`: (headers with lower-case names, JSON body or None) in arrival order.
    `max_concurrent`: the most chat requests it was handling at once (a request counts
    from its arrival until its response starts, so a client that waits for one response
    before sending the next request is never seen twice).
    """

    def __init__(self, script: Script, *, model: str = MODEL) -> None:
        if isinstance(script, list) and not script:
            raise ValueError("a script needs at least one reply")
        self.script = script
        self.model = model
        self.requests: list[tuple[dict[str, str], Any]] = []
        self.max_concurrent = 0
        self._concurrent = 0
        self._next = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def chat_requests(self) -> list[tuple[dict[str, str], Any]]:
        with self._lock:
            return [(headers, body) for headers, body in self.requests
                    if headers[":path"].endswith("/chat/completions")]

    def __enter__(self) -> ScriptedServer:
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.scripted = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="scripted-llm-server", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stops serving and closes the socket; a reply still sleeping wakes and gives up."""
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _reply_to(self, body: Any) -> Reply:
        with self._lock:
            if callable(self.script):
                script = self.script
            else:
                reply = self.script[min(self._next, len(self.script) - 1)]
                self._next += 1
                return reply
        return script(body)

    def _record(self, headers: dict[str, str], body: Any) -> None:
        with self._lock:
            self.requests.append((headers, body))

    def _arrive(self) -> None:
        with self._lock:
            self._concurrent += 1
            self.max_concurrent = max(self.max_concurrent, self._concurrent)

    def _leave(self) -> None:
        with self._lock:
            self._concurrent -= 1


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a handler still sleeping must not keep the process (or server_close) waiting
    scripted: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out has hung up: writing to it fails, and that is expected.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_GET(self) -> None:
        scripted = self.server.scripted
        scripted._record(self._headers(), None)
        if self.path.rstrip("/").endswith("/models"):
            created = int(time.time())
            self._send(200, json.dumps({"object": "list", "data": [
                {"id": scripted.model, "object": "model", "created": created, "owned_by": "scripted"}]}))
        else:
            self._send(404, _error_body(404, f"no such path {self.path}"))

    def do_POST(self) -> None:
        scripted = self.server.scripted
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        scripted._record(self._headers(), body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, _error_body(404, f"no such path {self.path}"))
            return
        scripted._arrive()
        try:
            reply = scripted._reply_to(body)
            while isinstance(reply, Slow):
                if scripted._closing.wait(reply.seconds):
                    return  # stopping: nobody waits for this answer any more
                reply = reply.then
        finally:
            scripted._leave()
        self._answer(reply, body)

    def _answer(self, reply: Reply, body: Any) -> None:
        scripted = self.server.scripted
        if isinstance(reply, Text):
            model = body.get("model") if isinstance(body, dict) else None
            completion: dict[str, Any] = {
                "id": f"chatcmpl-scripted-{len(scripted.requests)}", "object": "chat.completion",
                "created": int(time.time()), "model": model or scripted.model,
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": reply.content}}]}
            if reply.usage:
                completion["usage"] = {"prompt_tokens": reply.prompt_tokens,
                                       "completion_tokens": reply.completion_tokens,
                                       "total_tokens": reply.prompt_tokens + reply.completion_tokens}
            self._send(200, json.dumps(completion))
        elif isinstance(reply, Status):
            payload = reply.body if reply.body is not None else _error_body(reply.code, f"scripted {reply.code}")
            self._send(reply.code, payload, headers=reply.headers)
        elif isinstance(reply, Malformed):
            self._send(200, reply.body, content_type=reply.content_type)
        elif isinstance(reply, RawJson):
            self._send(200, json.dumps(reply.body))
        else:
            raise TypeError(f"not a scripted reply: {reply!r}")

    def _headers(self) -> dict[str, str]:
        headers = {name.lower(): value for name, value in self.headers.items()}
        headers[":path"] = self.path  # the request line's path, under a name no header can have
        return headers

    def _send(self, code: int, payload: str, *, content_type: str = "application/json",
              headers: Mapping[str, str] | None = None) -> None:
        data = payload.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _error_body(code: int, message: str) -> str:
    return json.dumps({"error": {"message": message, "type": "scripted_error", "param": None, "code": str(code)}})
