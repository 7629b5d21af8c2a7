"""Small fake LLM servers on loopback, speaking the real wire formats.

One HTTP server answers both `POST /v1/messages` (Anthropic Messages) and
`POST /v1/chat/completions` (OpenAI chat completions), plus `GET /v1/models`
in either dialect (told apart by the `anthropic-version` header the Anthropic
SDK sends). Tests queue replies; the last queued reply repeats. Every request
is recorded (path, headers, JSON body) so tests can inspect the prompt.
These are the only fakes in the test suite: they stand in for paid APIs.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    kind: str = "answer"          # answer | status | refusal | drop
    text: str = ""
    status: int = 200
    input_tokens: int | None = 1200
    output_tokens: int | None = 80
    delay_s: float = 0.0
    model: str | None = None      # what the server reports; default: the requested model
    extra: dict = field(default_factory=dict)


def json_answer(answer: str, sources: list[str], gaps: list[str] | None = None, **kw) -> Reply:
    """A reply whose text is the JSON object synthesize asks for."""
    return Reply(text=json.dumps({"answer": answer, "sources": sources, "gaps": gaps or []}), **kw)


class FakeLLM:
    """Start with `FakeLLM()`, stop with `.close()` (or use it as a context manager)."""

    def __init__(self):
        self.replies: list[Reply] = [Reply(text='{"answer": "ok", "sources": [], "gaps": []}')]
        self.requests: list[dict] = []
        self.models = ["claude-sonnet-4-5-20250929", "gpt-4.1-mini", "llama3.1"]
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.server.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-llm", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def queue(self, *replies: Reply) -> "FakeLLM":
        with self._lock:
            self.replies = list(replies)
        return self

    def next_reply(self) -> Reply:
        with self._lock:
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def record(self, entry: dict) -> None:
        with self._lock:
            self.requests.append(entry)

    def calls(self, path_suffix: str) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith(path_suffix)]

    def sleep(self, seconds: float) -> None:
        self._closing.wait(seconds)

    def close(self) -> None:
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _anthropic_message(req: dict, r: Reply) -> dict:
    usage = {}
    if r.input_tokens is not None:
        usage["input_tokens"] = r.input_tokens
    if r.output_tokens is not None:
        usage["output_tokens"] = r.output_tokens
    body = {
        "id": "msg_fake0001", "type": "message", "role": "assistant",
        "model": r.model or req.get("model", "claude-fake"),
        "content": [{"type": "text", "text": r.text}] if r.kind != "refusal" or r.text else [],
        "stop_reason": "refusal" if r.kind == "refusal" else "end_turn",
        "stop_sequence": None,
    }
    if usage:
        body["usage"] = {"input_tokens": 0, "output_tokens": 0, **usage}
    return body


def _openai_completion(req: dict, r: Reply) -> dict:
    refusal = r.kind == "refusal"
    body = {
        "id": "chatcmpl-fake0001", "object": "chat.completion", "created": int(time.time()),
        "model": r.model or req.get("model", "gpt-fake"),
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": None if refusal else r.text,
                        "refusal": (r.text or "I can't help with that.") if refusal else None},
            "logprobs": None,
            "finish_reason": "stop",
        }],
    }
    if r.input_tokens is not None and r.output_tokens is not None:
        body["usage"] = {"prompt_tokens": r.input_tokens, "completion_tokens": r.output_tokens,
                         "total_tokens": r.input_tokens + r.output_tokens}
    return body


def _error_body(anthropic: bool, status: int, message: str) -> dict:
    kind = {429: "rate_limit_error", 401: "authentication_error", 404: "not_found_error",
            400: "invalid_request_error", 529: "overloaded_error"}.get(status, "api_error")
    if anthropic:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out as two writes; without this, Nagle + delayed ACK add ~40 ms a call
    disable_nagle_algorithm = True

    def log_message(self, *args):  # keep test output clean
        pass

    @property
    def fake(self) -> FakeLLM:
        return self.server.fake  # type: ignore[attr-defined]

    def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def do_GET(self):
        anthropic = "anthropic-version" in {k.lower() for k in self.headers.keys()}
        self.fake.record({"path": self.path, "method": "GET", "headers": dict(self.headers), "body": None})
        if not self.path.split("?")[0].endswith("/models"):
            return self._send(404, _error_body(anthropic, 404, "no such route"))
        if anthropic:
            data = [{"id": m, "type": "model", "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
                    for m in self.fake.models]
            return self._send(200, {"data": data, "has_more": False,
                                    "first_id": data[0]["id"] if data else None,
                                    "last_id": data[-1]["id"] if data else None})
        data = [{"id": m, "object": "model", "created": 1700000000, "owned_by": "fake"} for m in self.fake.models]
        return self._send(200, {"object": "list", "data": data})

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?")[0]
        self.fake.record({"path": path, "method": "POST", "headers": dict(self.headers), "body": req})
        anthropic = path.endswith("/v1/messages")
        if not anthropic and not path.endswith("/chat/completions"):
            return self._send(404, _error_body(False, 404, "no such route"))
        r = self.fake.next_reply()
        if r.delay_s:
            self.fake.sleep(r.delay_s)
        if r.kind == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return
        if r.kind == "status":
            # retry-after 0: an SDK that does retry must not sleep in a test
            return self._send(r.status, _error_body(anthropic, r.status, r.text or "fake failure"),
                              {"retry-after": "0", "x-should-retry": "false"})
        body = _anthropic_message(req, r) if anthropic else _openai_completion(req, r)
        body.update(r.extra)
        return self._send(200, body)
