"""Models not in the catalogue, read from the Hugging Face Hub: the `Hub` a model's config.json and
parameter counts come through (the real one wraps `huggingface_hub`; `HttpHub` is a bounded look-up
over plain HTTP, `MemoryHub` what the bot has already looked up; tests pass a `Hub` that reads local
fixture files), and what names a Hub model (an id, a URL).

The config becomes a `ModelSpec` in `core.model.config`; exact parameter counts come from the
checkpoint's safetensors headers (`core.model.safetensors`), as hf-mem does, not from a guess.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from core.errors import CoreError, UnknownModelError
from core.model.checks import ConfigRefused as ConfigRefused
from core.model.checks import check_counts
from core.model.config import spec_from_config

_HF_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class Hub(Protocol):
    def config(self, repo_id: str) -> dict[str, Any]:
        """The repository's config.json."""
        ...

    def parameter_counts(self, repo_id: str) -> dict[str, int] | None:
        """Elements per safetensors dtype over all shards, or None without safetensors."""
        ...


class HuggingFaceHub:
    """The real Hub, through `huggingface_hub` (optional dependency: the `hf` extra)."""

    def __init__(self, timeout_s: float = 10) -> None:
        self.timeout_s = timeout_s

    def config(self, repo_id: str) -> dict[str, Any]:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError

        try:
            path = hf_hub_download(repo_id, "config.json", etag_timeout=self.timeout_s)
        except (RepositoryNotFoundError, EntryNotFoundError) as e:
            raise UnknownModelError(repo_id) from e
        loaded: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
        return loaded

    def parameter_counts(self, repo_id: str) -> dict[str, int] | None:
        from huggingface_hub import get_safetensors_metadata
        from huggingface_hub.errors import NotASafetensorsRepoError

        try:
            meta = get_safetensors_metadata(repo_id, timeout=self.timeout_s)
        except NotASafetensorsRepoError:
            return None
        return {str(dtype): int(n) for dtype, n in meta.parameter_count.items()}


def default_hub() -> Hub:
    return HuggingFaceHub()


# --- a quick look-up over plain HTTP (what the bot does for a model it does not know) ---------------

HF_ENDPOINT = "https://huggingface.co"
LOOKUP_BUDGET_S = 3.0
"""The most one look-up may take, both requests together, connecting and every read: a user waits
for it. No retries (the `huggingface_hub` client's ETag timeout and back-off can keep a user waiting
~25 s offline)."""
# The Hub answers 401 for a repository that does not exist (or is private) and 403 for a gated one
# without access; 404 for a missing file: for us, each means "cannot read this model's config".
_NOT_FOUND_STATUSES = frozenset({401, 403, 404})
MAX_RESPONSE_BYTES = 1_000_000  # a config.json is a few KB, the model-info JSON tens of KB
_READ_CHUNK = 65_536
# The Hub's own rule for repository names (huggingface_hub `validate_repo_id`): ASCII letters,
# digits, "-", "_", "." and at most 96 characters, for the owner and for the name.
_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


class HubUnavailable(CoreError):
    """The Hub did not answer in time (offline, slow, 5xx): the answer is "try later", not "unknown"."""

    def __init__(self, repo_id: str, reason: str) -> None:
        super().__init__(f"could not reach Hugging Face for {repo_id}: {reason}", field="model")
        self.repo_id = repo_id


class NotAHubId(UnknownModelError):
    """A name shaped like `org/name` that the Hub cannot have (`org/модель`): never sent to it."""


def is_hub_id(text: str) -> bool:
    return bool(_HUB_ID_RE.match(text))


class _Deadline:
    """One look-up's deadline, kept by a timer that shuts down its connections when the time is up.

    A socket timeout bounds each read, not the response: a server dripping a byte a second holds a
    plain `urlopen` for as long as it likes. Shut down, a blocked read returns at once."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def opener(self) -> urllib.request.OpenerDirector:
        """urllib's opener (redirects, proxies from the environment) whose connections are watched."""
        deadline = self

        def watched(base: type[http.client.HTTPConnection]) -> Any:
            class Watched(base):  # type: ignore[valid-type, misc]
                def connect(self) -> None:
                    super().connect()
                    deadline.watch(self.sock)

            return Watched

        class Http(urllib.request.HTTPHandler):
            def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
                return self.do_open(watched(http.client.HTTPConnection), req)

        class Https(urllib.request.HTTPSHandler):
            def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
                return self.do_open(watched(http.client.HTTPSConnection), req, context=self._context)  # type: ignore[attr-defined]

        return urllib.request.build_opener(Http, Https)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # the plain socket's shutdown: an SSL socket's would unwrap
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class HttpHub:
    """The Hub's public HTTP API, read with the standard library within one deadline.

    config.json from `{endpoint}/{repo}/resolve/main/config.json`; parameter counts per dtype from
    the model-info API `{endpoint}/api/models/{repo}?expand=safetensors` (`safetensors.parameters`,
    what `huggingface_hub.HfApi.model_info(expand=["safetensors"])` reads). Both requests, connecting
    and every read, end within `budget_s` of the hub's creation (`_Deadline`); a body over
    MAX_RESPONSE_BYTES is refused. Blocking: the bot calls it in a worker thread. `endpoint` points
    tests at a local fake Hub.
    """

    def __init__(self, endpoint: str = HF_ENDPOINT, budget_s: float = LOOKUP_BUDGET_S) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.deadline = time.monotonic() + budget_s

    def config(self, repo_id: str) -> dict[str, Any]:
        loaded = self._get_json(repo_id, f"{self.endpoint}/{repo_id}/resolve/main/config.json")
        if not isinstance(loaded, dict):
            raise UnknownModelError(repo_id)
        return loaded

    def parameter_counts(self, repo_id: str) -> dict[str, int] | None:
        try:
            info = self._get_json(repo_id, f"{self.endpoint}/api/models/{repo_id}?expand=safetensors")
        except UnknownModelError:
            return None
        safetensors = info.get("safetensors") if isinstance(info, dict) else None
        params = safetensors.get("parameters") if isinstance(safetensors, dict) else None
        return check_counts(params, repo_id)

    def _get_json(self, repo_id: str, url: str) -> Any:
        if not is_hub_id(repo_id):
            raise NotAHubId(repo_id)
        deadline = _Deadline(self.deadline)
        remaining = deadline.remaining()
        if remaining <= 0:
            raise HubUnavailable(repo_id, "out of time")
        timer = threading.Timer(remaining, deadline.expire)
        timer.daemon = True
        timer.start()
        try:
            body = self._read(deadline, repo_id, url, remaining)
        finally:
            timer.cancel()
        try:
            return json.loads(body)
        except RecursionError as e:  # nested past the decoder's stack
            raise ConfigRefused(repo_id, "malformed", field="config.json") from e
        except ValueError as e:
            raise HubUnavailable(repo_id, "not JSON") from e

    @staticmethod
    def _read(deadline: _Deadline, repo_id: str, url: str, timeout: float) -> bytes:
        request = urllib.request.Request(url, headers={"User-Agent": "gpufit", "Accept": "application/json"})
        body = bytearray()
        try:
            with deadline.opener().open(request, timeout=timeout) as response:
                while chunk := response.read1(_READ_CHUNK):
                    body += chunk
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise ConfigRefused(repo_id, "malformed", field="config.json")
        except urllib.error.HTTPError as e:
            if e.code in _NOT_FOUND_STATUSES:
                raise UnknownModelError(repo_id) from e
            raise HubUnavailable(repo_id, f"HTTP {e.code}") from e
        except (OSError, http.client.HTTPException) as e:  # URLError, timeouts, resets, bad headers
            reason = "out of time" if deadline.expired else str(getattr(e, "reason", e)) or type(e).__name__
            raise HubUnavailable(repo_id, reason) from e
        if deadline.expired:  # cut short: what was read is not the whole body
            raise HubUnavailable(repo_id, "out of time")
        return bytes(body)


class MemoryHub:
    """A `Hub` over what was read before (the bot's cache): no network; anything else is unknown."""

    def __init__(
        self,
        records: Mapping[str, tuple[dict[str, Any], dict[str, int] | None]],
        key: Callable[[str], str] = str,
    ) -> None:
        self.records, self.key = records, key

    def config(self, repo_id: str) -> dict[str, Any]:
        record = self.records.get(self.key(repo_id))
        if record is None:
            raise UnknownModelError(repo_id)
        return record[0]

    def parameter_counts(self, repo_id: str) -> dict[str, int] | None:
        record = self.records.get(self.key(repo_id))
        return record[1] if record else None


def look_up(repo_id: str, hub: Hub) -> tuple[dict[str, Any], dict[str, int] | None]:
    """config.json and parameter counts of `repo_id`, checked to size (`spec_from_config`).

    Raises `UnknownModelError` (no such model, or no access), `HubUnavailable` (try later), or a
    `CoreError` when the config is not one this estimator reads (not a language model's), among them
    `ConfigRefused` when it holds a value no model has."""
    config = hub.config(repo_id)
    counts = hub.parameter_counts(repo_id)
    try:
        spec_from_config(config, repo_id, counts)
    except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as e:
        if isinstance(e, CoreError):
            raise
        reason = type(e).__name__
        raise CoreError(f"{repo_id}: config.json could not be read ({reason})", field="model") from e
    return config, counts


_HF_URL_RE = re.compile(r"^(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/(?P<id>[^/?#\s]+/[^/?#\s]+)")


def hf_id_from_url(text: str) -> str | None:
    """`https://huggingface.co/Qwen/Qwen3-8B/tree/main` → 'Qwen/Qwen3-8B'; None if not a model URL."""
    match = _HF_URL_RE.match(text.strip())
    if match is None or match.group("id").split("/")[0] in ("datasets", "spaces", "api", "docs"):
        return None
    return match.group("id")


def looks_like_hf_id(text: str) -> bool:
    return bool(_HF_ID_RE.match(text.strip()))


# --- safetensors ---------------------------------------------------------------------------------


# --- config.json -> ModelSpec --------------------------------------------------------------------
