"""Schemathesis hooks for test/api/schemathesis.test.ts.

They teach the fuzzer facts of the API that JSON Schema cannot state, and lift one limitation of schemathesis with
multipart forms that carry a file. Every check runs; every request goes out as the fuzzer drew it, except that a
schema-valid Idempotency-Key is made unique.
"""

import os
import uuid
from types import SimpleNamespace

import schemathesis
from hypothesis import strategies as st
from schemathesis.core.failures import AcceptedNegativeData
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import _form_body_is_valid_as_sent, _has_other_negated_location
from schemathesis.transport.serialization import Binary

# The only binary the API takes is the PDF of a document ("file" on POST/PUT /documents). Whether bytes are a PDF
# (that parses, is not encrypted, has at most 500 pages) is beyond JSON Schema, so schema-valid uploads are a real
# PDF made by the test, rather than random bytes that the API rightly refuses.
# The test's PDF has 500 pages, the most the API takes, so any approver page the schema allows is on it.
with open(os.environ["WATHIQ_FUZZ_PDF"], "rb") as pdf:
    schemathesis.openapi.format("binary", st.just(Binary(pdf.read())))

# `format: phone`: a WhatsApp number that is valid for its country code (libphonenumber's rules, which no pattern
# states); Saudi and Emirati mobile numbers, with or without the +.
schemathesis.openapi.format("phone", st.from_regex(r"\A\+?(?:9665[013-9]|9715[024568])[0-9]{7}\Z"))


@schemathesis.hook
def before_call(context, case, kwargs):
    _unique_idempotency_key(case)


def _unique_idempotency_key(case):
    """An Idempotency-Key names one request: a schema-valid key is made unique to this request.

    The fuzzer draws keys from a small space and would send the same key with different requests, which the API
    answers with the documented 422 (key reused for another request). Malformed keys (negative cases) stay as
    drawn, so the 422 for them is still exercised.
    """
    headers = case.headers
    if not headers or case.meta is None or not case.meta.generation.mode.is_positive:
        return
    for name in list(headers):
        if name.lower() == "idempotency-key" and headers[name]:
            headers[name] = str(uuid.uuid4())


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Schemathesis's own allowance for forms, applied to forms that carry a file.

    multipart/form-data has no types: a boolean `true` drawn to violate `type: string` goes out as the text `true`
    (a valid department key). Schemathesis excuses such a "schema-violating request accepted" when the form, read
    as the server reads it, satisfies the schema (`_form_body_is_valid_as_sent`), but that rule gives up on any
    form with a file part, because its validator cannot read the file value. This runs the same rule with the file
    taken as the string the schema declares. Every other failure stands.
    """
    if not isinstance(failure, AcceptedNegativeData):
        return True
    body = case.body
    media_type = case.media_type or ""
    if not media_type.startswith("multipart/form-data") or not isinstance(body, dict):
        return True
    if case.meta is None or _has_other_negated_location(case, ParameterLocation.BODY):
        return True
    files_as_text = SimpleNamespace(
        body={name: ("file" if isinstance(value, Binary) else value) for name, value in body.items()},
        operation=case.operation,
    )
    return not _form_body_is_valid_as_sent(response, files_as_text, media_type)
