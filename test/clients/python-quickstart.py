"""The quickstart through clients/python, run by python-client.test.ts against the live service.

Arguments: the service's root URL, an API key and secret, a PDF. Prints one JSON object for the test to check.
The development inbox and the public pages are not part of the API, so they are read here with urllib; the
service under test does not listen on its PUBLIC_BASE_URL, so public URLs are fetched from the root given.
"""

import hashlib
import json
import re
import sys
import time
from urllib.parse import urlencode, urlsplit
from urllib.request import HTTPRedirectHandler, Request, build_opener, urlopen

from wathiq_client import Client, WathiqError

root, api_key, api_secret, pdf_path = sys.argv[1:5]
client = Client(root, api_key, api_secret)


def eventually(check, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError("gave up waiting")


def public(url):
    parts = urlsplit(url)
    with urlopen(root + parts.path + (f"?{parts.query}" if parts.query else "")) as response:
        return response.read()


class NoRedirect(HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def approve_in_inbox(token):
    payload = f"approve:{token}"

    def message_id():
        page = urlopen(f"{root}/dev/inbox").read().decode().replace("\n", "")
        at = page.find(f'value="{payload}"')
        found = re.findall(r'name="message_id" value="(\d+)"', page[:at]) if at >= 0 else []
        return found[-1] if found else None

    data = urlencode({"message_id": eventually(message_id), "payload": payload}).encode()
    try:
        build_opener(NoRedirect).open(Request(f"{root}/dev/inbox/reply", data=data, method="POST"))
    except Exception as answer:  # the inbox answers 302, which urllib raises when not following it
        location = answer.headers.get("Location", "")
        assert "result=accepted" in location, location


with open(pdf_path, "rb") as f:
    pdf = f.read()

try:
    client.create(title="x", approvers=[{"name": "Sara", "phone": "12"}], file=pdf)
    refused = None
except WathiqError as err:
    refused = {"status": err.status, "fields": sorted(err.details)}

document = client.create(
    title_ar="عقد توريد",
    title_en="Supply contract",
    workflow_type="sequential",
    approvers=[
        {"name": "Sara", "phone": "+966501234567", "action_type": "approve_only", "notify": True},
        {"name_ar": "عمر", "name_en": "Omar", "phone": "966551234567", "action_type": "approve_only"},
    ],
    reminders={"first_after_hours": 24, "every_hours": 24, "max": 1},
    file=pdf,
    filename="contract.pdf",
)
sent = client.send_document(document["id"])
for approver in document["approvers"]:
    link = eventually(lambda: (lambda got: got if got["usable_now"] else None)(client.get_approver_link(approver["id"])))
    approve_in_inbox(link["url"].rsplit("/a/", 1)[1])

status = eventually(lambda: (lambda now: now if now["status"] == "approved" else None)(client.get_document_status(document["id"])))
download = client.download_document(document["id"])
signed = public(download["download_url"])
page = public(client.get_document(document["id"])["verification_url"]).decode()
print(
    json.dumps(
        {
            "refused": refused,
            "created": {"status": document["status"], "title_ar": document["title_ar"], "names": [a["name_en"] for a in document["approvers"]]},
            "sent": sent["status"],
            "progress": status["progress"],
            "starts": signed[:5].decode("latin1"),
            "sha256": hashlib.sha256(signed).hexdigest(),
            "original_sha256": document["file"]["sha256"],
            "verified_sha256": re.search(r'id="signed-sha256">([0-9a-f]{64})<', page).group(1),
        },
        ensure_ascii=False,
    )
)
