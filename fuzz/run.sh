#!/usr/bin/env bash
# Fuzzes the running server against its own OpenAPI document with
# schemathesis (installed into a virtualenv on first use): every documented
# operation, positive and negative data, with staff and guest credentials.
# Usage: fuzz/run.sh [path/to/ordergate]   (default: target/debug/ordergate)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/ordergate}"
# CPython 3.11 can fail inside hypothesis with "AST constructor recursion
# depth mismatch" (python/cpython#106905), which schemathesis reports as a
# runtime error of whichever operation it was generating for: use a newer
# Python when the machine has one that runs.
python=python3
pyenv_root=$(pyenv root 2>/dev/null || true)
for candidate in python3.13 "$pyenv_root"/versions/3.13*/bin/python3 \
    python3.12 "$pyenv_root"/versions/3.12*/bin/python3; do
    if "$candidate" -c 'import venv' 2>/dev/null; then
        python=$candidate
        break
    fi
done
venv="${SCHEMATHESIS_VENV:-target/schemathesis-$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')}"
if [ ! -x "$venv/bin/st" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q "schemathesis>=4.3,<5"
fi

work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" demo --listen 127.0.0.1:0 --database "sqlite://$work/fuzz.db" --staff-token fuzz-staff-token-0001 \
    > "$work/demo.out" 2>/dev/null &
server=$!
for _ in $(seq 100); do
    grep -q '^listening on ' "$work/demo.out" && break
    sleep 0.1
done
eval "$(grep 'export ' "$work/demo.out" | sed 's/^ *export /export /')"

# An item and an order to aim at: a tracked item, and one order of it.
item=$(curl -sf -H "Authorization: Bearer $TOKEN" "$OG/api/v1/shops/$SHOP/inventory" |
    python3 -c 'import json,sys; print([e for e in json.load(sys.stdin)["entries"] if e["stock"]][0]["itemId"])')
order=$(curl -sf -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d "{\"items\": [{\"menuItemId\": \"$item\", \"quantity\": 1}]}" \
    "$OG/api/v1/sessions/$SESSION/staff-orders" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["orderId"])')

export OG_TOKEN="$TOKEN" OG_SHOP="$SHOP" OG_SESSION="$SESSION" OG_PIN="$PIN" OG_ITEM="$item" OG_ORDER="$order"
shift || true
"$venv/bin/st" --config-file fuzz/schemathesis.toml run "$OG/api/v1/openapi.json" "$@"
