#!/usr/bin/env python3
"""A guest and a kitchen behind the TLS proxy, as packaging/check.sh runs it.

Everything goes through the proxy's HTTPS address, verified against the
proxy's certificate authority, from the source address 127.0.0.2 (the proxy
itself connects to ordergate from 127.0.0.1). It seats a table, opens the
guest's and the kitchen's event streams, places one order and checks:

- the order is answered 201 and both streams deliver it within a second;
- the proxy's access log keeps no PIN (the guest stream carries it in its
  query string);
- ordergate's access lines name the client 127.0.0.2, which it can only
  know from the proxy's X-Forwarded-For.

Usage: proxy_client.py BASE_URL CA_FILE STAFF_TOKEN ORDERGATE_LOG PROXY_LOG
"""

import http.client
import json
import queue
import ssl
import sys
import threading
import time
import urllib.parse
import uuid

CLIENT_ADDRESS = "127.0.0.2"
DELIVERY_LIMIT_SECS = 1.0


class Proxy:
    def __init__(self, base, ca_file):
        url = urllib.parse.urlsplit(base)
        self.host, self.port = url.hostname, url.port
        self.tls = ssl.create_default_context(cafile=ca_file)

    def connect(self, timeout=10):
        return http.client.HTTPSConnection(
            self.host,
            self.port,
            context=self.tls,
            timeout=timeout,
            source_address=(CLIENT_ADDRESS, 0),
        )

    def call(self, method, path, body=None, headers=None):
        connection = self.connect()
        headers = dict(headers or {})
        payload = None
        if body is not None:
            payload = json.dumps(body)
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        text = response.read().decode()
        connection.close()
        try:
            return response.status, json.loads(text)
        except ValueError:
            return response.status, text

    def stream(self, path, headers, events):
        """Reads a server-sent event stream into `events` as (event, data, arrival)."""
        connection = self.connect(timeout=30)
        connection.request("GET", path, headers=dict(headers, Accept="text/event-stream"))
        response = connection.getresponse()
        if response.status != 200:
            raise SystemExit(f"{path.split('?')[0]}: {response.status} {response.read()!r}")
        events.put(("open", None, time.monotonic()))
        event, data = None, []
        while True:
            line = response.fp.readline()
            if not line:
                return
            line = line.decode().rstrip("\r\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif line == "" and event:
                events.put((event, json.loads("\n".join(data)), time.monotonic()))
                event, data = None, []


def wait_ready(proxy):
    """The proxy may still be taking its certificate when it starts."""
    deadline = time.monotonic() + 15
    while True:
        try:
            status, _ = proxy.call("GET", "/readyz")
            if status == 200:
                return
        except (OSError, http.client.HTTPException) as e:
            if time.monotonic() > deadline:
                raise SystemExit(f"the proxy did not answer: {e!r}")
        if time.monotonic() > deadline:
            raise SystemExit("ordergate was not ready behind the proxy")
        time.sleep(0.2)


def expect(status, wanted, what, body):
    if status != wanted:
        raise SystemExit(f"{what}: {status}, wanted {wanted}: {body}")


def watch(proxy, name, path, headers):
    events = queue.Queue()

    def run():
        try:
            proxy.stream(path, headers, events)
        except Exception as e:  # the main thread reports a stream that stops
            events.put(("failed", repr(e), time.monotonic()))

    threading.Thread(target=run, name=name, daemon=True).start()
    kind, detail, _ = events.get(timeout=10)
    if kind != "open":
        raise SystemExit(f"the {name} stream did not open: {detail}")
    return events


def delivered(events, name, order_id, sent):
    while True:
        remaining = sent + DELIVERY_LIMIT_SECS - time.monotonic()
        try:
            kind, data, arrival = events.get(timeout=max(remaining, 0.001))
        except queue.Empty:
            raise SystemExit(f"the {name} stream did not deliver the order within 1 s")
        if kind == "failed":
            raise SystemExit(f"the {name} stream failed: {data}")
        if kind == "order.placed" and data["orderId"] == order_id:
            return arrival - sent


def main():
    base, ca_file, token, ordergate_log, proxy_log = sys.argv[1:]
    proxy = Proxy(base, ca_file)
    staff = {"Authorization": f"Bearer {token}"}
    wait_ready(proxy)

    status, shop = proxy.call(
        "POST", "/api/v1/shops", {"name": "Proxy Diner", "currency": "USD"}, staff
    )
    expect(status, 201, "create the shop", shop)
    shop_id = shop["shopId"]
    item_id = str(uuid.uuid4())
    catalog = {"items": [{"menuItemId": item_id, "name": "Soup", "category": "Mains", "price": 450}]}
    status, body = proxy.call("PUT", f"/api/v1/shops/{shop_id}/catalog", catalog, staff)
    expect(status, 200, "publish the catalog", body)
    status, seated = proxy.call(
        "POST", f"/api/v1/shops/{shop_id}/sessions", {"tableLabel": "T1"}, staff
    )
    expect(status, 201, "seat a table", seated)
    session_id, pin = seated["sessionId"], seated["pin"]

    kitchen = watch(proxy, "kitchen", f"/api/v1/shops/{shop_id}/events", staff)
    guest = watch(proxy, "guest", f"/api/v1/sessions/{session_id}/events?pin={pin}", {})

    sent = time.monotonic()
    status, order = proxy.call(
        "POST",
        f"/api/v1/sessions/{session_id}/orders",
        {"items": [{"menuItemId": item_id, "quantity": 2}]},
        {"X-Session-PIN": pin, "Idempotency-Key": str(uuid.uuid4()), "X-Client-Id": "phone-1"},
    )
    expect(status, 201, "place the order", order)
    for name, events in [("kitchen", kitchen), ("guest", guest)]:
        took = delivered(events, name, order["orderId"], sent)
        print(f"the {name} stream delivered the order {took * 1000:.0f} ms after it was sent")

    with open(proxy_log) as log:
        if pin in log.read():
            raise SystemExit("the proxy's access log keeps the table's PIN")

    # ordergate writes its access line once the answer's head is out.
    deadline = time.monotonic() + 5
    while True:
        with open(ordergate_log) as log:
            lines = [json.loads(line) for line in log if line.startswith("{")]
        placed = [
            line
            for line in lines
            if line.get("message") == "answered"
            and line["span"]["route"] == "/api/v1/sessions/{sessionId}/orders"
            and line["span"].get("session") == session_id
        ]
        if placed or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if not placed:
        raise SystemExit("ordergate logged no access line for the order")
    client = placed[0]["span"].get("client")
    if client != CLIENT_ADDRESS:
        raise SystemExit(f"ordergate saw the order from {client}, not {CLIENT_ADDRESS}")
    print(f"ordergate saw the order from {client}, through X-Forwarded-For")


if __name__ == "__main__":
    main()
