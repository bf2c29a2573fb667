"""Drives the browser test: random writes through the HTTP API by an admin and by one
customer (and the customer's attempts on other customers' orders, which must be refused),
then waits until each page's table (reported from its DOM) equals its scoped query run
directly against SQLite: every open order for the admin's page, the customer's own for the
customer's page."""
import argparse, json, random, sqlite3, sys, time, urllib.request, urllib.error

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--database", required=True)
parser.add_argument("--writes", type=int, default=1000)
parser.add_argument("--admin-token", required=True)
parser.add_argument("--customer", required=True)
parser.add_argument("--customer-token", required=True)
args = parser.parse_args()
base = f"http://127.0.0.1:{args.port}"


def call(method, path, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def report(name):
    return call("GET", f"/api/report?name={name}")[1]


def expected(customer=None):
    scope, arguments = ("AND customer = ? ", (customer,)) if customer else ("", ())
    with sqlite3.connect(f"file:{args.database}?mode=ro", uri=True) as db:
        return [list(row) for row in db.execute(
            "SELECT id, customer, status, amount, updated_at FROM orders WHERE status = 'open' " + scope +
            "ORDER BY updated_at DESC, id DESC LIMIT 200", arguments)]


def version():
    return call("GET", "/api/status", token=args.admin_token)[1]["version"]


deadline = time.time() + 60
while report("admin") is None or report("customer") is None:
    if time.time() > deadline:
        sys.exit("browser-test: a page never reported (did it load?)")
    time.sleep(0.2)

rng = random.Random(20261122)  # fixed: the same writes every run
statuses = ["open", "paid", "shipped", "cancelled"]
admin, customer = args.admin_token, args.customer_token
ids = [row[0] for row in sqlite3.connect(args.database).execute("SELECT id FROM orders")]
own = [row[0] for row in sqlite3.connect(args.database).execute("SELECT id FROM orders WHERE customer = ?", (args.customer,))]
rejected = refused = 0
for step in range(args.writes):
    kind = rng.random()
    if kind < 0.20:
        status, body = call("POST", "/api/orders", {"customer": f"browser {step}", "status": rng.choice(statuses), "amount": rng.randint(100, 99999)}, admin)
        if status == 200:
            ids.append(body["id"])
    elif kind < 0.30 and ids:
        victim = ids.pop(rng.randrange(len(ids)))
        status, _ = call("DELETE", f"/api/orders/{victim}", token=admin)
        own = [i for i in own if i != victim]
    elif kind < 0.65 and ids:
        status, _ = call("PATCH", f"/api/orders/{rng.choice(ids)}", {"status": rng.choice(statuses), "amount": rng.randint(100, 99999)}, admin)
    elif kind < 0.75:
        # The customer's own orders: the body need not name the customer.
        status, body = call("POST", "/api/orders", {"status": rng.choice(statuses), "amount": rng.randint(100, 99999)}, customer)
        if status == 200:
            assert body["customer"] == args.customer, body
            ids.append(body["id"])
            own.append(body["id"])
    elif kind < 0.90 and own:
        status, _ = call("PATCH", f"/api/orders/{rng.choice(own)}", {"status": rng.choice(statuses)}, customer)
    elif kind < 0.95:
        # Another customer's order: refused, nothing changes.
        others = [i for i in ids if i not in own]
        before = version()
        target = rng.choice(others)
        status, body = call("PATCH", f"/api/orders/{target}", {"status": "cancelled"}, customer)
        assert status in (403, 404) and "error" in body, (status, body)
        refused += 1
        assert version() == before, "a refused write committed"
        continue
    else:
        status, _ = call("POST", "/api/churn?changes=5", token=admin)
    if status != 200:
        rejected += 1
# A bad write, and a write without a token, are refused with a JSON error and change nothing.
before = version()
status, body = call("POST", "/api/orders", {"customer": "", "status": "lost", "amount": -1}, admin)
assert status == 400 and "error" in body, (status, body)
status, body = call("POST", "/api/churn?changes=5")
assert status == 401 and "error" in body, (status, body)
assert version() == before, "a refused write committed"

final = version()
deadline = time.time() + 30
for name, scope in [("admin", None), ("customer", args.customer)]:
    while True:
        shown, wanted = report(name), expected(scope)
        if shown["rows"] == wanted:
            break
        if time.time() > deadline:
            diffs = sum(1 for a, b in zip(shown["rows"], wanted) if a != b) + abs(len(shown["rows"]) - len(wanted))
            sys.exit(f"browser-test: FAILED: the {name}'s page shows {len(shown['rows'])} rows, SQLite {len(wanted)}; "
                     f"{diffs} differ (page at commit {shown['version']}, database at {final})")
        time.sleep(0.3)
    assert scope is None or all(row[1] == scope for row in shown["rows"]), "the customer's page shows another customer's order"
    print(f"browser-test: the {name}'s page: {len(wanted)} rows equal SQLite's scoped query, in order, after {shown['events']} events")
print(f"browser-test: passed: {args.writes} writes ({rejected} refused as invalid, {refused} refused to the customer); "
      f"database at commit {final}")
