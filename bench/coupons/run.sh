#!/usr/bin/env bash
# Coupon and loyalty-user search at scale (issue 5): loads USERS loyalty users
# and COUPONS coupons into a fresh store with `posgate generate coupons`,
# starts posgate on loopback, and drives the keyword search (docs/api.md §6.1)
# and the coupon search (docs/api.md §5.2) with random real keys through wrk
# at a moderate, bounded load; prints load time, req/s, p50, p90 and p99.
#
#   bench/coupons/run.sh [sqlite|postgres|both]        (default both)
#
# Settings (environment): USERS, COUPONS (1000000 each), DURATION (30s per
# search), CONNECTIONS (4), THREADS (1), DELAY_MS (10: each connection pauses
# this long between requests, which keeps the load moderate), WORK (a
# directory for the store, binaries and logs; a new temporary one by
# default; removed at the end unless KEEP=1), SKIP_LOAD=1 (measure the data
# a kept WORK or the DSN below holds already). PostgreSQL: POSGATE_BENCH_POSTGRES_DSN
# names an empty database (or schema, via search_path) to use; without it
# a throw-away cluster is started in WORK (see start_postgres).
#
# Needs Go, curl and wrk (Debian: apt-get install -y wrk), and PostgreSQL's
# binaries for the postgres run without a DSN (apt-get install -y postgresql).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

stores=${1:-both}
USERS=${USERS:-1000000}
COUPONS=${COUPONS:-1000000}
DURATION=${DURATION:-30s}
CONNECTIONS=${CONNECTIONS:-4}
THREADS=${THREADS:-1}
DELAY_MS=${DELAY_MS:-10}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/posgate-coupons-bench.XXXXXX")}
mkdir -p "$WORK"
chmod 755 "$WORK" # .ci/pg-start runs PostgreSQL as the postgres user when called as root

for tool in curl wrk; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install -y $tool)" >&2; exit 1; }
done

pids=()
pgdir=
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	if [[ -n $pgdir ]]; then bash .ci/pg-start --stop "$pgdir" || true; fi # stops any cluster in DIR/data
	if [[ ${KEEP:-0} != 1 ]]; then rm -rf "$WORK"; else echo "bench: kept $WORK"; fi
}
trap cleanup EXIT

echo "== building posgate and the request bodies (users $USERS, coupons $COUPONS)"
go build -o "$WORK/posgate" ./cmd/posgate
go run ./bench/coupons -kind users -n 20000 -users "$USERS" -coupons "$COUPONS" >"$WORK/users.bodies"
go run ./bench/coupons -kind coupons -n 20000 -users "$USERS" -coupons "$COUPONS" >"$WORK/coupons.bodies"

# free_port prints a loopback port nothing answers on.
free_port() {
	local port=$((20000 + RANDOM % 30000))
	while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
	echo "$port"
}

# drive NAME PATH BODIES: one wrk run against the server at $base.
drive() {
	local name=$1 path=$2 bodies=$3 out
	out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s bench/coupons/search.lua "$base" -- \
		"$path" "$token" "$bodies" "$DELAY_MS" | tee -a "$WORK/wrk.log" | grep '^RESULT')
	if [[ $name != warm-up ]]; then
		echo "$store $name: ${out#RESULT }"
		results+=("$store $name ${out#RESULT }")
	fi
}

# start_postgres DIR starts a throw-away cluster in DIR (as .ci/pg-start
# does, but sized for the data set: a 1 GB buffer cache holds the users'
# and coupons' hot pages) and prints its DSN. fsync is off: that only
# speeds up the load, the searches measured are reads.
start_postgres() {
	local dir=$1 bindir port
	bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[[ -n $bindir ]] || { echo "bench: no PostgreSQL in /usr/lib/postgresql (apt-get install -y postgresql)" >&2; exit 1; }
	local as=()
	if [[ $(id -u) == 0 ]]; then as=(runuser -u postgres --); fi
	mkdir -p "$dir"
	if [[ $(id -u) == 0 ]]; then chown postgres: "$dir"; fi
	port=$(free_port)
	"${as[@]}" "$bindir/initdb" --pgdata="$dir/data" --username=postgres --auth=trust --encoding=UTF8 --no-locale --no-sync >"$dir/initdb.log"
	"${as[@]}" "$bindir/pg_ctl" --pgdata="$dir/data" --log="$dir/postgres.log" --wait --silent start \
		-o "-F -h 127.0.0.1 -p $port -k $dir -c max_connections=50 -c shared_buffers=1GB -c effective_cache_size=4GB \
-c random_page_cost=1.1 -c synchronous_commit=off -c full_page_writes=off -c wal_level=minimal -c max_wal_senders=0 -c max_wal_size=4GB" >&2
	"${as[@]}" "$bindir/createdb" --host="$dir" --port="$port" --username=postgres posgate_bench
	echo "postgres://postgres@127.0.0.1:$port/posgate_bench?sslmode=disable"
}

results=()
bench() {
	local store=$1 dsn=$2
	if [[ ${SKIP_LOAD:-0} == 1 ]]; then
		echo "== $store: using the data already loaded (SKIP_LOAD=1)"
	else
		echo "== $store: loading the demo data set and $USERS users, $COUPONS coupons"
		"$WORK/posgate" demo load --database "$dsn" >/dev/null
		local start=$SECONDS
		"$WORK/posgate" generate coupons --database "$dsn" --pos clover --company demo-company --users "$USERS" --coupons "$COUPONS" \
			2>"$WORK/$store-generate.log"
		results+=("$store load $((SECONDS - start))s")
	fi

	local port
	port=$(free_port)
	base="http://127.0.0.1:$port"
	"$WORK/posgate" serve --database "$dsn" --listen "127.0.0.1:$port" --log-level warn >"$WORK/$store-serve.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		curl -fs "$base/readyz" >/dev/null 2>&1 && break
		sleep 0.2
	done
	token=$(curl -fs -u demo-pos:demo-pos-secret -d grant_type=client_credentials -d scope=pos_integration "$base/connect/token" |
		sed -E 's/.*"access_token":"([^"]+)".*/\1/')

	echo "== $store: warming up, then $DURATION per search, $CONNECTIONS connections, ${DELAY_MS}ms pause between a connection's requests"
	DURATION=5s drive warm-up /v2/pos/clover/loyaltyCard/users/lookup "$WORK/users.bodies"
	DURATION=5s drive warm-up /pos/clover/coupon/couponCode/search "$WORK/coupons.bodies"
	drive keyword-search /v2/pos/clover/loyaltyCard/users/lookup "$WORK/users.bodies"
	drive coupon-search /pos/clover/coupon/couponCode/search "$WORK/coupons.bodies"
	kill "${pids[-1]}"
	wait "${pids[-1]}" 2>/dev/null || true
	unset 'pids[-1]'
}

if [[ $stores == sqlite || $stores == both ]]; then
	bench sqlite "$WORK/posgate.db"
fi
if [[ $stores == postgres || $stores == both ]]; then
	dsn=${POSGATE_BENCH_POSTGRES_DSN:-}
	if [[ -z $dsn ]]; then
		pgdir="$WORK/pg"
		dsn=$(start_postgres "$pgdir")
	fi
	bench postgres "$dsn"
fi

echo "== results (latency of each request, as wrk measures it; ${DELAY_MS}ms pauses not included)"
printf '%s\n' "${results[@]}"
