#!/usr/bin/env python3
"""Simulated dashboards: N pages open on one sweep for S seconds, polling as
the page does, counting the bytes the coordinator sent them.

  dashboard_load.py HTTP_ADDR PAGES SECONDS events|poll

`events` is the page before the long poll: it follows /events and fetches the
sweep's data (every table and both plots) on each event. `poll` is the page
now: /api/changes?since=N (5 s wait), then the sweep's status, the sections a
page opens by default (12 boards or fewer) when their counts change, and the
accuracy plot when the results do, at most once a second.
"""
import http.client, json, sys, threading, time

addr, pages, seconds, mode = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
host, port = addr.rsplit(":", 1)
total = [0, 0]  # bytes, requests
lock = threading.Lock()


def fetch(conn, path):
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    head = sum(len(k) + len(v) + 4 for k, v in r.getheaders()) + 17
    with lock:
        total[0] += len(body) + head
        total[1] += 1
    return r.status, body


def sweep_id():
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    return json.loads(fetch(conn, "/api/sweeps")[1])[0]["id"]


def events_page(sid, end):
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    stream = http.client.HTTPConnection(host, int(port), timeout=60)
    stream.request("GET", "/events")
    r = stream.getresponse()
    while time.time() < end:
        line = r.fp.readline()
        with lock:
            total[0] += len(line)
        if line.startswith(b"event: change"):
            fetch(conn, f"/api/sweeps/{sid}")
    stream.close()


def poll_page(sid, end):
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    version, loaded = None, {}
    while time.time() < end:
        began = time.time()
        since = "" if version is None else f"?since={version}&timeout=5"
        version = json.loads(fetch(conn, f"/api/changes{since}")[1])["version"]
        s = json.loads(fetch(conn, f"/api/sweeps/{sid}")[1])
        for x in s["sections"]:
            key = f"section-{x['index']}"
            if x["boards"] <= 12 and loaded.get(key) != x["tasks"]:
                fetch(conn, f"/api/sweeps/{sid}/sections/{x['index']}")
                loaded[key] = x["tasks"]
        if loaded.get("accuracy") != s["done"]:
            fetch(conn, f"/api/sweeps/{sid}/figures/accuracy")
            loaded["accuracy"] = s["done"]
        time.sleep(max(0, 1 - (time.time() - began)))


sid = sweep_id()
end = time.time() + seconds
page = events_page if mode == "events" else poll_page
threads = [threading.Thread(target=page, args=(sid, end), daemon=True) for _ in range(pages)]
for t in threads:
    t.start()
for t in threads:
    t.join(seconds + 30)
print(json.dumps({"mode": mode, "pages": pages, "seconds": seconds, "bytes": total[0], "requests": total[1]}))
