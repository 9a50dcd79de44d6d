"""A third party's first steps in Python, with a client generated from the live document
by openapi-python-client (pinned in python-requirements.txt), as the document is: the
same flow as flow.ts (sign up without a key, every pet by following `Link`, an order
with an Idempotency-Key that a retry replays, typed errors), and what Python clients
met before: an error code this client does not know, a photo sent as bytes, and the
event stream read as a stream.

    PETSTORE_API=http://127.0.0.1:3013/api/v1 PETSTORE_ADMIN_KEY=psk_… python flow.py

(end2end/api-client/run.sh generates the client as `petstore_client` and runs it.)
"""

import io
import os
import re
import struct
import sys
import time
import zlib
from urllib.parse import parse_qs, urlparse

from petstore_client import AuthenticatedClient, Client
from petstore_client.api.pets import list_pets, set_pet_photo
from petstore_client.api.store import create_key, get_inventory, get_order, place_order
from petstore_client.models import CreatedApiKey, Error, ErrorCode, NewOrder, Pet, PetStatus, Plan, Role, SignUp
from petstore_client.types import UNSET, File

BASE = os.environ.get("PETSTORE_API", "http://127.0.0.1:3013/api/v1")


def check(condition: bool, what: str) -> None:
    if not condition:
        sys.exit(f"python client flow: {what}")


def keyed(key: str) -> AuthenticatedClient:
    """A client sending `key` as X-API-Key."""
    return AuthenticatedClient(base_url=BASE, token=key, prefix="", auth_header_name="X-API-Key")


def png(width: int, height: int) -> bytes:
    """A small grey PNG, made with the standard library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def main() -> None:
    # 1. Sign up, anonymously: no key, and the empty SignUp ({}).
    signed_up = create_key.sync_detailed(client=Client(base_url=BASE), body=SignUp())
    check(signed_up.status_code == 201, f"sign-up answered {signed_up.status_code}: {signed_up.content!r}")
    created = signed_up.parsed
    check(isinstance(created, CreatedApiKey), f"a CreatedApiKey, got {created!r}")
    check(created.key.startswith("psk_") and created.plan == Plan.FREE and created.role == Role.CUSTOMER, "a Free key")
    check(created.revoked_at is None, "revokedAt is sent, null while the key works")
    client = keyed(created.key)

    # 2. Every pet, two at a time, following Link. What the server always sends is
    # there (photoUrls); what it leaves out is UNSET, never None.
    pets: list[Pet] = []
    cursor = UNSET
    while True:
        page = list_pets.sync_detailed(client=client, limit=2, cursor=cursor)
        check(page.status_code == 200 and isinstance(page.parsed, list), f"a page of pets ({page.status_code})")
        pets.extend(page.parsed)
        check("x-ratelimit-limit" in page.headers, "rate-limit headers")
        found = re.search(r'<([^>]+)>;\s*rel="next"', page.headers.get("link", ""))
        if not found:
            break
        cursor = parse_qs(urlparse(found.group(1)).query)["cursor"][0]
    check(len(pets) >= 3, f"the demo catalog's pets, got {len(pets)}")
    check(len({pet.id for pet in pets}) == len(pets), "no pet twice")
    for pet in pets:
        check(isinstance(pet.photo_urls, list), f"pet {pet.id} has its photoUrls")
        check(pet.price is UNSET or isinstance(pet.price, int), f"pet {pet.id}'s price is a number or absent")
        check(pet.description is UNSET or isinstance(pet.description, str), f"pet {pet.id}'s description")

    # 3. An order with an Idempotency-Key; the retry gets the same order.
    in_stock = None
    for pet in (pet for pet in pets if pet.status == PetStatus.AVAILABLE):
        stock = get_inventory.sync(pet.id, client=client)
        if stock is not None and not isinstance(stock, Error) and stock.quantity > 0:
            in_stock = stock
            break
    check(in_stock is not None, "a pet in stock")
    order = NewOrder(pet_id=in_stock.pet_id, quantity=1)
    idempotency_key = f"python-client-flow-{time.time_ns()}"
    first = place_order.sync_detailed(client=client, body=order, idempotency_key=idempotency_key)
    check(first.status_code == 201 and not isinstance(first.parsed, Error), f"placed ({first.status_code})")
    check(first.headers.get("location") == f"/api/v1/store/orders/{first.parsed.id}", "Location names it")
    retry = place_order.sync(client=client, body=order, idempotency_key=idempotency_key)
    check(retry is not None and not isinstance(retry, Error) and retry.id == first.parsed.id, "the retry replays it")

    # 4. Typed errors.
    refused = place_order.sync_detailed(client=client, body=NewOrder(pet_id=in_stock.pet_id, quantity=0))
    check(refused.status_code == 422 and isinstance(refused.parsed, Error), f"quantity 0: {refused.status_code}")
    check(refused.parsed.code == ErrorCode.VALIDATION_FAILED and refused.parsed.status == 422, "validation_failed")
    missing = get_order.sync(999_999, client=client)
    check(isinstance(missing, Error) and missing.code == ErrorCode.NOT_FOUND, f"a not_found Error: {missing!r}")

    # 5. A code a later release adds is read as text, not refused.
    later = Error.from_dict({"code": "a_code_of_a_later_release", "message": "new", "status": 409})
    check(later.code == "a_code_of_a_later_release" and later.status == 409, f"an unknown code: {later!r}")

    # 6. A photo, sent as bytes, by an admin.
    admin = keyed(os.environ["PETSTORE_ADMIN_KEY"])
    photo = File(payload=io.BytesIO(png(96, 72)), file_name="grey.png")
    updated = set_pet_photo.sync_detailed(pets[0].id, client=admin, body=photo)
    check(updated.status_code == 200 and isinstance(updated.parsed, Pet), f"the photo: {updated.content!r}")
    check(len(updated.parsed.photo_urls) == 3, f"three widths: {updated.parsed.photo_urls}")

    # 7. The event stream (x-streaming in the document) read as a stream, through the
    # generated client's own connection: its first bytes, then closed.
    with client.get_httpx_client().stream("GET", "/events", headers={"Accept": "text/event-stream"}) as stream:
        check(stream.status_code == 200, f"the stream answered {stream.status_code}")
        check(stream.headers["content-type"].startswith("text/event-stream"), "an event stream")
        check(next(stream.iter_bytes(), b"") != b"", "its opening bytes")

    print(f"python client flow: signed up, read {len(pets)} pets by Link, order {first.parsed.id} placed once, "
          "typed and unknown errors read, a photo sent as bytes, the stream opened")


if __name__ == "__main__":
    main()
