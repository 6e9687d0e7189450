#!/usr/bin/env bash
# The Debian package on this machine, run the way its systemd unit runs it
# and behind the TLS proxy of packaging/Caddyfile, as an operator following
# the README would set it up (CI has no systemd, so this script does the
# unit's part: the state directory, the user, the environment file):
#
# 1. `cargo deb` builds the package; `dpkg -i` installs it.
# 2. The operator sets a staff token (and here, a free port) in
#    /etc/ordergate/ordergate.env.
# 3. `ordergate serve` runs as the unit's user, with the unit's working
#    directory and environment file; `ordergate rush` places orders through
#    it and checks every invariant.
# 4. Caddy from Debian, with the shipped Caddyfile (its site name and
#    upstream swapped for local ones, its certificate from Caddy's own local
#    authority) in front: proxy_client.py places an order over HTTPS and
#    checks the event streams, the client address and the proxy's log.
# 5. SIGTERM stops the server cleanly; `ordergate verify` checks its database.
#
# It leaves the machine as it found it: the package purged, its user and
# state removed. It refuses to run where ordergate is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo-deb >/dev/null; then
    cargo install --locked cargo-deb@3.8.0
fi
if ! command -v caddy >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq caddy
fi

# It installs and purges its own: never over an ordergate someone runs here.
if dpkg -s ordergate >/dev/null 2>&1 || getent passwd ordergate >/dev/null; then
    echo "packaging/check.sh: ordergate is installed here (the package or its user);" \
        "run this where it is not (or dpkg --purge ordergate; userdel ordergate)" >&2
    exit 1
fi

work=$(mktemp -d)
pids=()
remove_install() {
    dpkg --purge ordergate >/dev/null 2>&1 || true
    if getent passwd ordergate >/dev/null; then userdel ordergate; fi
    if getent group ordergate >/dev/null; then groupdel ordergate; fi
    rm -rf /var/lib/ordergate /etc/ordergate
}
finish() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    remove_install
    rm -rf "$work"
}
trap finish EXIT
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
show_logs() {
    echo "--- ordergate's log"; tail -n 40 "$work/ordergate.log" || true
    echo "--- caddy's log"; tail -n 40 "$work/caddy.log" 2>/dev/null || true
}

# 1. Build and install.
cargo deb -p ordergate --output "$work/debs/"
dpkg -i "$work"/debs/ordergate_*.deb
unit=$(dpkg -L ordergate | grep '/systemd/system/ordergate.service$')
settings_file=/etc/ordergate/ordergate.env
test -x /usr/bin/ordergate
test "$(stat -c %U:%G:%a "$settings_file")" = root:ordergate:640
unit_setting() { sed -n "s/^$1=//p" "$unit"; }
user=$(unit_setting User)
getent passwd "$user" >/dev/null

# 2. The operator's part.
port=$(free_port)
token=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
sed -i -e "s/^ORDERGATE_STAFF_TOKEN=.*/ORDERGATE_STAFF_TOKEN=$token/" \
    -e "s/^ORDERGATE_LISTEN=.*/ORDERGATE_LISTEN=127.0.0.1:$port/" "$settings_file"

# 3. The unit's part, then the server as the unit starts it.
state=/var/lib/$(unit_setting StateDirectory)
install -d -o "$user" -g "$user" -m "$(unit_setting StateDirectoryMode)" "$state"
mapfile -t environment < <(grep -Ev '^[[:space:]]*(#|$)' "$settings_file")
read -ra exec_start <<<"$(unit_setting ExecStart)"
(
    cd "$(unit_setting WorkingDirectory)"
    umask "$(unit_setting UMask)"
    exec env -i "${environment[@]}" /usr/bin/setpriv --reuid="$user" --regid="$user" \
        --init-groups "${exec_start[@]}"
) >"$work/ordergate.out" 2>"$work/ordergate.log" &
server=$!
pids+=("$server")
for _ in $(seq 100); do
    grep -q '^listening on ' "$work/ordergate.out" && break
    kill -0 "$server" 2>/dev/null || { show_logs; exit 1; }
    sleep 0.1
done
grep -q "^listening on http://127.0.0.1:$port" "$work/ordergate.out" || { show_logs; exit 1; }
test "$(ps -o uid= -p "$server" | tr -d " ")" = "$(id -u "$user")"
/usr/bin/ordergate rush --url "http://127.0.0.1:$port" --staff-token "$token" \
    --duration-secs 3 --tables 2 --guests 2 || { show_logs; exit 1; }
test "$(stat -c %U "$state/ordergate.db")" = "$user"

# 4. Behind Caddy.
proxy_port=$(free_port)
{
    cat <<CADDY
{
	admin off
	local_certs
	skip_install_trust
	http_port $(free_port)
	https_port $proxy_port
	storage file_system $work/caddy
}
CADDY
    sed -e "s|^order.example.com {|https://127.0.0.1:$proxy_port {|" \
        -e "s|127.0.0.1:8080|127.0.0.1:$port|" packaging/Caddyfile
} >"$work/Caddyfile"
grep -q "127.0.0.1:$port" "$work/Caddyfile"
XDG_CONFIG_HOME=$work XDG_DATA_HOME=$work caddy run --adapter caddyfile \
    --config "$work/Caddyfile" 2>"$work/caddy.log" &
pids+=("$!")
authority=$work/caddy/pki/authorities/local/root.crt
for _ in $(seq 100); do
    [ -s "$authority" ] && break
    sleep 0.1
done
python3 packaging/proxy_client.py "https://127.0.0.1:$proxy_port" "$authority" "$token" \
    "$work/ordergate.log" "$work/caddy.log" || { show_logs; exit 1; }

# 5. A clean stop, and a sound database.
kill -TERM "$server"
wait "$server"
/usr/bin/setpriv --reuid="$user" --regid="$user" --init-groups \
    /usr/bin/ordergate verify --database "sqlite://$state/ordergate.db"
echo "packaging: installed, served as $user, behind TLS, stopped cleanly"
