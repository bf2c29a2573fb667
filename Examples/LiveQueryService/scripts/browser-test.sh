#!/usr/bin/env bash
# The page in a real browser, logged in twice: headless Chromium opens the same live query as
# an admin and as one customer, the driver makes 1,000 random writes through the HTTP API (the
# admin's, the customer's, and the customer's refused attempts on other orders), and the table
# each page shows (read back from its DOM) must equal its scoped query run directly against
# SQLite, row for row. Saves a screenshot. Loopback only; bounded in writes and time.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-.build/browser-test}
WRITES=${WRITES:-1000}
if ! command -v chromium >/dev/null; then
    apt-get update -qq && apt-get install -y chromium
fi
CONFIGURATION=${CONFIGURATION:-release} # CI uses the debug build its tests made
swift build -c "$CONFIGURATION" --product live-query-service
rm -rf "$OUT" && mkdir -p "$OUT"
SERVICE=".build/$CONFIGURATION/live-query-service"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$OUT/token-secret"
CUSTOMER="customer 1"
ADMIN_TOKEN=$("$SERVICE" token --admin --token-secret-file "$OUT/token-secret")
CUSTOMER_TOKEN=$("$SERVICE" token --customer "$CUSTOMER" --token-secret-file "$OUT/token-secret")
"$SERVICE" --port 0 --database "$OUT/orders.sqlite" --seed 3000 --token-secret-file "$OUT/token-secret" --test-hooks >"$OUT/server.log" 2>&1 &
SERVER=$!
BROWSER=""
cleanup() { kill $SERVER ${BROWSER:+$BROWSER} 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 100); do grep -q "live-query-service: http" "$OUT/server.log" && break; sleep 0.1; done
PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$OUT/server.log" | head -1)
[ -n "$PORT" ] || { cat "$OUT/server.log"; exit 1; }
QUERY="status=open&orderBy=updated_at&descending=true&limit=200"
chromium --headless=new --no-sandbox --disable-gpu --remote-debugging-port=0 --user-data-dir="$OUT/profile-admin" \
    "http://127.0.0.1:$PORT/?$QUERY&report=admin#access_token=$ADMIN_TOKEN" >"$OUT/browser-admin.log" 2>&1 &
BROWSER=$!
chromium --headless=new --no-sandbox --disable-gpu --remote-debugging-port=0 --user-data-dir="$OUT/profile-customer" \
    "http://127.0.0.1:$PORT/?$QUERY&report=customer#access_token=$CUSTOMER_TOKEN" >"$OUT/browser-customer.log" 2>&1 &
BROWSER="$BROWSER $!"
python3 scripts/browser_driver.py --port "$PORT" --database "$OUT/orders.sqlite" --writes "$WRITES" \
    --admin-token "$ADMIN_TOKEN" --customer "$CUSTOMER" --customer-token "$CUSTOMER_TOKEN"
# The converged page as a person sees it.
timeout 60 chromium --headless=new --no-sandbox --disable-gpu --window-size=1100,1400 --user-data-dir="$OUT/profile-shot" \
    --screenshot="$OUT/live-orders.png" --virtual-time-budget=3000 "http://127.0.0.1:$PORT/?$QUERY#access_token=$ADMIN_TOKEN" >>"$OUT/browser-admin.log" 2>&1
echo "browser-test: screenshot $OUT/live-orders.png"
