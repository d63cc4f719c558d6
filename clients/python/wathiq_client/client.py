"""The hand-written half of the client: HTTP over the standard library, the error, and a typed document create.

Everything else (the types, one method per operation) is in _generated.py, made from openapi.json.
"""

from __future__ import annotations

import json as jsonlib
import uuid
from typing import Any, Optional
from urllib.error import HTTPError
from urllib.parse import urlencode
from urllib.request import Request, urlopen

from ._generated import CcRecipient, Document, GeneratedOperations, Reminders

# An approver as the create form takes it: name (or name_ar and name_en) and phone, the rest optional.
ApproverInput = dict[str, Any]


class WathiqError(Exception):
    """An answer in the error envelope: `status` (HTTP), `code`, `message` and per-field `details`."""

    def __init__(self, status: int, body: Any):
        error = body.get("error", {}) if isinstance(body, dict) else {}
        self.status = status
        self.code = error.get("code", status)
        self.message = error.get("message", str(body))
        self.details = error.get("details", {})
        super().__init__(f"{status}: {self.message} {jsonlib.dumps(self.details) if self.details else ''}".strip())


class Client(GeneratedOperations):
    """`Client("http://127.0.0.1:3000", api_key, api_secret)`; methods answer the envelope's `data`."""

    def __init__(self, base_url: str, api_key: str, api_secret: str, *, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/") + "/api/v1"
        self._authorization = f"Bearer {api_key}:{api_secret}"
        self.timeout = timeout

    def create(
        self,
        *,
        approvers: list[ApproverInput],
        file: bytes,
        filename: str = "document.pdf",
        title: Optional[str] = None,
        title_ar: Optional[str] = None,
        title_en: Optional[str] = None,
        workflow_type: Optional[str] = None,
        department: Optional[str] = None,
        expires_in_days: Optional[int] = None,
        allow_delegation: Optional[bool] = None,
        cc: Optional[list[CcRecipient]] = None,
        reminders: Optional[Reminders] = None,
        idempotency_key: Optional[str] = None,
    ) -> Document:
        """POST /documents with typed approvers, cc and reminders (sent as JSON parts) and the PDF."""
        parts: list[tuple[str, Any]] = []
        scalars = {
            "title": title,
            "title_ar": title_ar,
            "title_en": title_en,
            "workflow_type": workflow_type,
            "department": department,
            "expires_in_days": expires_in_days,
            "allow_delegation": allow_delegation,
        }
        for name, value in scalars.items():
            if value is not None:
                parts.append((name, ("true" if value else "false") if isinstance(value, bool) else str(value)))
        parts.append(("approvers", ("approvers.json", jsonlib.dumps(approvers).encode(), "application/json")))
        if cc is not None:
            parts.append(("cc", ("cc.json", jsonlib.dumps(cc).encode(), "application/json")))
        if reminders is not None:
            parts.append(("reminders", ("reminders.json", jsonlib.dumps(reminders).encode(), "application/json")))
        parts.append(("file", (filename, file, "application/pdf")))
        return self.create_document(parts=parts, idempotency_key=idempotency_key)

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[dict[str, Any]] = None,
        json: Any = None,
        multipart: Optional[list[tuple[str, Any]]] = None,
        headers: Optional[dict[str, str]] = None,
        envelope: bool = True,
    ) -> Any:
        url = self.base_url + path
        given = {k: v for k, v in (query or {}).items() if v is not None}
        if given:
            url += "?" + urlencode(given)
        sent = {"Authorization": self._authorization, "Accept": "application/json"}
        sent.update({k: v for k, v in (headers or {}).items() if v is not None})
        data: Optional[bytes] = None
        if multipart is not None:
            data, sent["Content-Type"] = _multipart(multipart)
        elif json is not None:
            data, sent["Content-Type"] = jsonlib.dumps(json).encode(), "application/json"
        request = Request(url, data=data, method=method, headers=sent)
        try:
            with urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
                status = response.status
        except HTTPError as err:
            raw, status = err.read(), err.code
        body = jsonlib.loads(raw) if raw else None
        if status >= 400:
            raise WathiqError(status, body)
        return body["data"] if envelope and isinstance(body, dict) and "data" in body else body


def _multipart(parts: list[tuple[str, Any]]) -> tuple[bytes, str]:
    """multipart/form-data: a str value is a field; a (filename, bytes, content type) tuple is a file part."""
    boundary = uuid.uuid4().hex
    chunks: list[bytes] = []
    for name, value in parts:
        chunks.append(f"--{boundary}\r\n".encode())
        if isinstance(value, tuple):
            filename, content, content_type = value
            chunks.append(
                f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                f"Content-Type: {content_type}\r\n\r\n".encode()
            )
            chunks.append(content)
        else:
            chunks.append(f'Content-Disposition: form-data; name="{name}"\r\n\r\n'.encode())
            chunks.append(str(value).encode())
        chunks.append(b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"
