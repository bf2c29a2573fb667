"""Drives the browser test: random writes through the HTTP API, then waits until the page's
table (reported from its DOM) equals the query run directly against SQLite."""
import argparse, json, random, sqlite3, sys, time, urllib.request, urllib.error

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--database", required=True)
parser.add_argument("--writes", type=int, default=1000)
args = parser.parse_args()
base = f"http://127.0.0.1:{args.port}"


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def report():
    return call("GET", "/api/report")[1]


def expected():
    with sqlite3.connect(f"file:{args.database}?mode=ro", uri=True) as db:
        return [list(row) for row in db.execute(
            "SELECT id, customer, status, amount, updated_at FROM orders WHERE status = 'open' "
            "ORDER BY updated_at DESC, id DESC LIMIT 200")]


deadline = time.time() + 60
while report() is None:
    if time.time() > deadline:
        sys.exit("browser-test: the page never reported (did it load?)")
    time.sleep(0.2)

rng = random.Random(20261122)  # fixed: the same writes every run
statuses = ["open", "paid", "shipped", "cancelled"]
ids = [row[0] for row in sqlite3.connect(args.database).execute("SELECT id FROM orders")]
rejected = 0
for step in range(args.writes):
    kind = rng.random()
    if kind < 0.25:
        status, body = call("POST", "/api/orders", {"customer": f"browser {step}", "status": rng.choice(statuses), "amount": rng.randint(100, 99999)})
        if status == 200:
            ids.append(body["id"])
    elif kind < 0.40 and ids:
        victim = ids.pop(rng.randrange(len(ids)))
        status, _ = call("DELETE", f"/api/orders/{victim}")
    elif kind < 0.95 and ids:
        status, _ = call("PATCH", f"/api/orders/{rng.choice(ids)}", {"status": rng.choice(statuses), "amount": rng.randint(100, 99999)})
    else:
        status, _ = call("POST", "/api/churn?changes=5")
    if status != 200:
        rejected += 1
# A bad write is refused with a JSON error and changes nothing.
before = call("GET", "/api/status")[1]["version"]
status, body = call("POST", "/api/orders", {"customer": "", "status": "lost", "amount": -1})
assert status == 400 and "error" in body, (status, body)
assert call("GET", "/api/status")[1]["version"] == before, "a refused write committed"

final = call("GET", "/api/status")[1]["version"]
deadline = time.time() + 30
while True:
    shown, wanted = report(), expected()
    if shown["rows"] == wanted:
        break
    if time.time() > deadline:
        diffs = sum(1 for a, b in zip(shown["rows"], wanted) if a != b) + abs(len(shown["rows"]) - len(wanted))
        sys.exit(f"browser-test: FAILED: the page shows {len(shown['rows'])} rows, SQLite {len(wanted)}; {diffs} differ (page at commit {shown['version']}, database at {final})")
    time.sleep(0.3)
print(f"browser-test: passed: {args.writes} writes ({rejected} refused), {shown['events']} events; "
      f"the page's {len(wanted)} rows equal SQLite's, in order (database at commit {final})")
