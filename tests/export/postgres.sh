#!/usr/bin/env bash
# cstrace export --postgres against a real PostgreSQL server, started here on
# 127.0.0.1 (a free port) from a cluster in the test's temporary directory and
# stopped at the end: the first capture's rows are the SQLite file's, table by
# table; a second capture adds its own machine with ids after the first's and
# its rows as its own export has them; three exports at once take turns and all
# land; the schema (columns and types, keys, indexes, view definitions) is what
# Debian perf's export-to-postgresql.py makes on the same server; a bad server
# is one line and exit 1; a killed export adds nothing.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
progs=$CSTRACE_BUILD_DIR/testdata
command -v sqlite3 >/dev/null || skip "sqlite3 not installed (scripts/setup.sh installs it)"
command -v psql >/dev/null || skip "psql not installed (package postgresql)"
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ] || skip "PostgreSQL server not installed (package postgresql)"
"$CSTRACE" export --postgres "host=127.0.0.1 port=1" /dev/null 2>&1 | grep -q "libpq cannot be loaded" &&
  skip "libpq cannot be loaded (package libpq5)"
need_synth aarch64 "$progs/aarch64/recurse"

# the server: as root, PostgreSQL runs as its own user
pgdir=$TMP/pg
mkdir -p "$pgdir"
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || skip "no postgres user to run the server as"
  chmod 711 "$TMP"
  chown postgres "$pgdir"
  as_pg=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stop_server() { "${as_pg[@]}" "$bin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1; }
trap 'stop_server; rm -rf "$TMP"' EXIT
"${as_pg[@]}" "$bin/initdb" -D "$pgdir/data" -A trust -U postgres --no-sync >"$TMP/initdb.log" 2>&1 ||
  { cat "$TMP/initdb.log"; fail "initdb"; finish; }
"${as_pg[@]}" "$bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/data/log" -w -o \
  "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$pgdir/data -c fsync=off" \
  start >/dev/null || { cat "$pgdir/data/log"; fail "the server does not start"; finish; }
conn="host=127.0.0.1 port=$port user=postgres"
pg() { # database statement...: each statement's rows
  local d=$1 a=() st
  shift
  for st in "$@"; do a+=(-c "$st"); done
  psql "$conn dbname=$d" -qAt -F'|' -v ON_ERROR_STOP=1 "${a[@]}"
}
check "a database for the traces" pg postgres "CREATE DATABASE traces"
db="$conn dbname=traces"
cd "$TMP" || exit 1

check "synth recurse" quiet "$CSTRACE" synth --arch aarch64 --out perf -o rec.data -- "$progs/aarch64/recurse"
check "synth fptr" quiet "$CSTRACE" synth --arch aarch64 --out perf -o fptr.data -- "$progs/aarch64/fptr"
check "SQLite: recurse" quiet "$CSTRACE" export -o rec.db rec.data
check "SQLite: fptr" quiet "$CSTRACE" export -o fptr.db fptr.data

# the first capture: every table as the SQLite file has it
check "--postgres recurse" quiet "$CSTRACE" export --postgres "$db" rec.data
cols() { # table: its columns, booleans as numbers
  case $1 in
    comms) echo "id, comm, c_thread_id, c_time, exec_flag::int, has_calls::int" ;;
    samples) echo "id, evsel_id, machine_id, thread_id, comm_id, dso_id, symbol_id, sym_offset, ip,
      time, cpu, to_dso_id, to_symbol_id, to_sym_offset, to_ip, branch_type, in_tx::int,
      call_path_id, insn_count, cyc_count, flags" ;;
    *) echo "*" ;;
  esac
}
for t in selected_events machines threads comms comm_threads dsos symbols branch_types samples \
         call_paths calls cstrace_captures; do
  key=id; [ $t = cstrace_captures ] && key=machine_id
  check "$t: the SQLite file's rows" cmp -s \
    <(sqlite3 rec.db "SELECT $(cols $t | sed 's/::int//g') FROM $t ORDER BY $key") \
    <(pg traces "SELECT $(cols $t) FROM $t ORDER BY $key")
done
check "the views read the same (calls_view)" cmp -s \
  <(sqlite3 rec.db "SELECT id, pid, tid, command, ip, symbol, branch_count, flags, parent_id FROM calls_view ORDER BY id") \
  <(pg traces "SELECT id, pid, tid, command, ip, symbol, branch_count, flags, parent_id FROM calls_view ORDER BY id")
check "... (samples_view)" cmp -s \
  <(sqlite3 rec.db "SELECT id, command, event, ip_hex, symbol, sym_offset, dso_short_name, to_ip_hex, to_symbol, branch_type_name FROM samples_view ORDER BY id") \
  <(pg traces "SELECT id, command, event, ip_hex, symbol, sym_offset, dso_short_name, to_ip_hex, to_symbol, branch_type_name FROM samples_view ORDER BY id")

# a second capture: a machine of its own, its rows as its own export has them
check "--postgres fptr" quiet "$CSTRACE" export --postgres "$db" fptr.data
check "... two machines, one event (perf's viewer takes no second), two captures" test \
  "$(pg traces 'SELECT count(*) FROM machines WHERE id > 0' 'SELECT count(*) FROM selected_events WHERE id > 0' 'SELECT count(*) FROM cstrace_captures' | tr '\n' ' ')" = "2 1 2 "
samples_of() { # machine: its samples without ids, in order
  echo "SELECT s.ip, s.to_ip, s.flags, s.insn_count, y.name, t.pid, c.comm FROM samples s
    JOIN symbols y ON y.id = s.symbol_id JOIN threads t ON t.id = s.thread_id
    JOIN comms c ON c.id = s.comm_id WHERE s.machine_id = $1 ORDER BY s.id"
}
calls_of() { # machine: its calls without ids, in order
  echo "SELECT c.flags, c.branch_count, c.insn_count, y.name,
      CASE WHEN c.return_id = 0 THEN 0 ELSE c.return_id - c.call_id END FROM calls c
    JOIN call_paths p ON p.id = c.call_path_id JOIN symbols y ON y.id = p.symbol_id
    JOIN threads t ON t.id = c.thread_id WHERE t.machine_id = $1 AND c.id > 0 ORDER BY c.id"
}
check "... its samples as its own export has them" cmp -s <(sqlite3 fptr.db "$(samples_of 1)") \
  <(pg traces "$(samples_of 2)")
check "... its calls as its own export has them" cmp -s <(sqlite3 fptr.db "$(calls_of 1)") \
  <(pg traces "$(calls_of 2)")
check "... the first capture's unchanged" cmp -s <(sqlite3 rec.db "$(samples_of 1)" "$(calls_of 1)") \
  <(pg traces "$(samples_of 1)" "$(calls_of 1)")
check "... has_calls for its comm" test "$(pg traces "SELECT has_calls FROM comms WHERE comm = 'fptr'")" = t
check "... the foreign keys hold (one more sample pointing nowhere is refused)" bash -c \
  "! psql '$db' -qAt -c 'INSERT INTO samples (id, evsel_id) VALUES (999999999, 77777)' >/dev/null 2>&1"

# three exports at once take turns and all land
if command -v parallel >/dev/null; then
  n=$(pg traces "SELECT count(*) FROM samples WHERE machine_id = 1")
  check "three exports at once" quiet parallel --will-cite -N0 -j3 \
    "'$CSTRACE' export --postgres '$db' rec.data" ::: 1 2 3
  check "... five machines" test "$(pg traces 'SELECT count(*) FROM machines WHERE id > 0')" -eq 5
  check "... each with all its samples" test \
    "$(pg traces 'SELECT DISTINCT count(*) FROM samples WHERE machine_id IN (3, 4, 5) GROUP BY machine_id')" = "$n"
else
  echo "SKIP (part): GNU parallel missing"
fi

# a server that is not there: one line, exit 1
"$CSTRACE" export --postgres "host=127.0.0.1 port=1 user=postgres dbname=traces" rec.data >/dev/null 2>err
check "no server: exit 1" test $? -eq 1
check "... one line saying so" bash -c "[ \$(wc -l <err) -eq 1 ] && grep -q 'postgres: cannot connect' err"

# a killed export adds nothing (its transaction never commits)
machines=$(pg traces "SELECT count(*) FROM machines")
check "a larger capture" quiet "$CSTRACE" synth --arch aarch64 --out perf --plugin -o big.data -- \
  "$progs/aarch64/bigloop" 400000
"$CSTRACE" export --postgres "$db" big.data >/dev/null 2>&1 &
parent=$!
for _ in $(seq 100); do
  [ "$(pg postgres "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")" -gt 0 ] && break
  sleep 0.05
done
sleep 0.3
child=$(pgrep -P $parent | head -1)
[ -n "$child" ] && kill -KILL "$child"
wait $parent
check "killed: exit by a signal" test $? -gt 128
check "killed: no rows added" test "$(pg traces 'SELECT count(*) FROM machines')" = "$machines"
check "killed: the next export is not kept waiting" quiet timeout 120 "$CSTRACE" export --postgres "$db" fptr.data

# perf's export-to-postgresql.py on the same server: the same schema
script=$(dpkg -L linux-perf 2>/dev/null | grep '/export-to-postgresql.py$' | head -1)
sys_python=/usr/bin/python3
[ -x "$sys_python" ] || sys_python=python3
if [ -f "$script" ] && command -v perf >/dev/null &&
   "$sys_python" -c 'from PySide2.QtSql import QSqlDatabase; import sys
sys.exit(0 if "QPSQL" in QSqlDatabase.drivers() else 1)' 2>/dev/null; then
  (PGHOST=127.0.0.1 PGPORT=$port PGUSER=postgres HOME=$TMP perf script -i rec.data --itrace=bep \
    -s "$script" perfdb branches calls >perf.log 2>&1)
  check "perf's export-to-postgresql.py" grep -q "Done" perf.log
  schema() {
    pg "$1" "SELECT table_name, column_name, ordinal_position, data_type, is_nullable
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'cstrace_captures'
      ORDER BY 1, 3"
    pg "$1" "SELECT conrelid::regclass, conname, contype, pg_get_constraintdef(oid) FROM pg_constraint
      WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2"
    pg "$1" "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1"
    pg "$1" "SELECT viewname, definition FROM pg_views WHERE schemaname = 'public' ORDER BY 1"
  }
  schema perfdb >perf.schema
  schema traces >cst.schema
  check "... the same tables, columns, types, keys, indexes and views" cmp -s perf.schema cst.schema
  check "... (and there is a schema to compare)" test "$(wc -l <perf.schema)" -gt 200
  check "... the same samples of the same capture" cmp -s \
    <(pg perfdb "SELECT id, ip, to_ip, flags FROM samples ORDER BY id") \
    <(pg traces "SELECT id, ip, to_ip, flags FROM samples WHERE machine_id <= 1 ORDER BY id")
  # and perf's viewer reads it from the server
  viewer=$(dpkg -L linux-perf 2>/dev/null | grep '/exported-sql-viewer.py$' | head -1)
  QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$TMP timeout 300 "$sys_python" \
    "$(dirname "$0")/viewer_shot.py" "$viewer" \
    "hostname=127.0.0.1 port=$port username=postgres dbname=traces" pg.png main fib \
    >viewer.out 2>&1
  check "exported-sql-viewer.py shows main and fib from the server" test $? -eq 0
  grep -v XDG_RUNTIME viewer.out | tail -3 | sed 's/^/  /'
else
  echo "SKIP (part): perf's export-to-postgresql.py or PySide2's PostgreSQL driver missing"
fi
finish
