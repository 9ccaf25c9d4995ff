#!/usr/bin/env bash
# cstrace export's rules: bad input gets what every verb gives (one line, exit 1)
# and leaves no database; an existing database is refused unless --append (a
# capture of its own: machines, selected_events and cstrace_captures rows, ids
# after the ones there, its rows as a single export writes them) or -f; a
# database appears whole, 0600, or not at all (a killed export leaves neither
# it nor its temporary file); concurrent appends take turns and lose nothing;
# option conflicts and filters are usage errors; progress on a terminal;
# --no-calls; snapshots export too.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
progs=$CSTRACE_BUILD_DIR/testdata
command -v sqlite3 >/dev/null || skip "sqlite3 not installed (scripts/setup.sh installs it)"
need_synth aarch64 "$progs/aarch64/recurse"
cd "$TMP" || exit 1
q() { sqlite3 "$@" 2>&1; }

check "synth recurse" quiet "$CSTRACE" synth --arch aarch64 --out perf -o rec.data -- "$progs/aarch64/recurse"
check "synth fptr" quiet "$CSTRACE" synth --arch aarch64 --out perf -o fptr.data -- "$progs/aarch64/fptr"

# --help, and the default name
check "--help: exit 0" quiet "$CSTRACE" export --help
check "--help names perf's schema" bash -c "'$CSTRACE' export --help | grep -q 'export-to-sqlite.py'"
check "export without -o: TRACE's name with .db" quiet "$CSTRACE" export rec.data
check "... rec.db" test -s rec.db
check "... 0600 (trace-derived data)" test "$(stat -c %a rec.db)" = 600
check "... a database of perf's tables" test "$(q rec.db 'SELECT count(*) FROM samples')" -gt 1000
check "... and no temporary file left" test -z "$(ls | grep '\.tmp\.')"

# an existing database: refused, kept; -f replaces; --append and -f conflict
cp rec.db keep.db
"$CSTRACE" export -o rec.db fptr.data >out 2>err
check "an existing database: exit 1" test $? -eq 1
check "... one line saying what to do" bash -c "[ \$(wc -l <err) -eq 1 ] && grep -q 'exists: add this capture to it with --append, or replace it with -f' err"
check "... and it is unchanged" cmp -s rec.db keep.db
check "-f replaces it" quiet "$CSTRACE" export -f -o rec.db fptr.data
check "... with the other capture" test "$(q rec.db "SELECT count(*) FROM comms WHERE comm = 'fptr'")" -eq 1
check "... still 0600" test "$(stat -c %a rec.db)" = 600
"$CSTRACE" export --append -f -o x.db rec.data >/dev/null 2>err
check "--append with -f: a usage error (exit 2)" test $? -eq 2
check "... and no file" test ! -e x.db

# --append: a capture of its own (machine), its rows as a single export writes them
check "export recurse" quiet "$CSTRACE" export -o one.db rec.data
check "export fptr" quiet "$CSTRACE" export -o two.db fptr.data
cp one.db both.db
check "--append fptr" quiet "$CSTRACE" export --append -o both.db fptr.data
check "... two machines, one event (perf's viewer takes no second), two captures" test \
  "$(q both.db 'SELECT count(*) FROM machines WHERE id > 0; SELECT count(*) FROM selected_events WHERE id > 0; SELECT count(*) FROM cstrace_captures' | tr '\n' ' ')" = "2 1 2 "
check "... the captures table names each input" test \
  "$(q both.db 'SELECT machine_id || path FROM cstrace_captures ORDER BY 1' | tr '\n' ' ')" = "1rec.data 2fptr.data "
rows() { # db machine: a capture's samples and calls, without ids
  q "$1" "SELECT s.ip, s.to_ip, s.flags, s.insn_count, y.name, t.pid, c.comm FROM samples s
    JOIN symbols y ON y.id = s.symbol_id JOIN threads t ON t.id = s.thread_id
    JOIN comms c ON c.id = s.comm_id WHERE s.machine_id = $2 ORDER BY s.id;
    SELECT c.flags, c.branch_count, c.insn_count, y.name,
      CASE WHEN c.return_id = 0 THEN 0 ELSE c.return_id - c.call_id END FROM calls c
    JOIN call_paths p ON p.id = c.call_path_id JOIN symbols y ON y.id = p.symbol_id
    JOIN threads t ON t.id = c.thread_id WHERE t.machine_id = $2 AND c.id > 0 ORDER BY c.id"
}
check "... the first capture's rows unchanged" cmp -s <(rows one.db 1) <(rows both.db 1)
check "... the second's as its own export has them" cmp -s <(rows two.db 1) <(rows both.db 2)
check "... ids after the first's" test \
  "$(q both.db "SELECT min(id) FROM samples WHERE machine_id = 2")" = "$(q one.db 'SELECT max(id) + 1 FROM samples')"
check "... has_calls for the second capture's comm" test \
  "$(q both.db "SELECT has_calls FROM comms WHERE comm = 'fptr'")" = 1
check "--append to a missing file makes it" quiet "$CSTRACE" export --append -o new.db rec.data
check "... a database" test "$(q new.db 'SELECT count(*) FROM machines')" -eq 2
check "... of the schema a new export has" cmp -s <(sqlite3 new.db .schema) <(sqlite3 one.db .schema)
check "... and its rows" cmp -s <(rows new.db 1) <(rows one.db 1)

# concurrent appends take turns (SQLite's lock) and lose nothing
if command -v parallel >/dev/null; then
  for i in 1 2 3 4; do ln -sf rec.data "c$i.data"; done
  check "four appends at once" quiet parallel --will-cite -j4 "'$CSTRACE' export --append -o many.db c{}.data" ::: 1 2 3 4
  check "... four machines" test "$(q many.db 'SELECT count(*) FROM machines WHERE id > 0')" -eq 4
  check "... four times the samples" test "$(q many.db 'SELECT count(*) FROM samples WHERE id > 0')" -eq \
    "$(( 4 * $(q one.db 'SELECT count(*) FROM samples WHERE id > 0') ))"
  n1=$(q one.db 'SELECT count(*) FROM samples WHERE id > 0')
  check "... each capture whole" test \
    "$(q many.db 'SELECT count(*) FROM samples WHERE id > 0 GROUP BY machine_id' | sort -u)" = "$n1"
else
  echo "SKIP (part): GNU parallel missing"
fi

# what is not perf's database is refused, and kept as it was
sqlite3 other.db "CREATE TABLE t (x integer); INSERT INTO t VALUES (1)"
cp other.db other.keep
"$CSTRACE" export --append -o other.db rec.data >/dev/null 2>err
check "--append to a database of other tables: exit 1" test $? -eq 1
check "... saying so" grep -q "not a database of perf's export schema" err
check "... unchanged" cmp -s other.db other.keep
echo "not a database" >text.db
"$CSTRACE" export --append -o text.db rec.data >/dev/null 2>err
check "--append to a text file: exit 1" test $? -eq 1
check "... unchanged" test "$(cat text.db)" = "not a database"

# bad input: what every verb gives, and no database
head -c 3000 rec.data >cut.data
printf 'PERFILE2 not really' >bad.data
for f in bad.data missing.data; do
  "$CSTRACE" export -o "$f.db" "$f" >/dev/null 2>err
  check "$f: exit 1" test $? -eq 1
  check "$f: one line naming the file" bash -c "[ \$(wc -l <err) -eq 1 ] && grep -q '$f' err"
  check "$f: no database, no temporary file" test -z "$(ls | grep "^$f.db")"
done
"$CSTRACE" export -o /nonexistent/dir/x.db rec.data >/dev/null 2>err
check "an output nobody can create: exit 1" test $? -eq 1
check "... saying why" grep -q "cannot create" err
"$CSTRACE" export -o rec.data rec.data >/dev/null 2>err
check "the input as the output: refused" test $? -eq 1
check "... the input kept" cmp -s rec.data c1.data

# usage errors: exit 2, nothing written
for args in "--pid 1" "--symbols main" "--postgres dbname=x -o y.db" "--postgres dbname=x --append"; do
  "$CSTRACE" export $args -o u.db rec.data >/dev/null 2>err
  check "export $args: a usage error" test $? -eq 2
done
check "... and no file" test ! -e u.db -a ! -e y.db

# a killed export leaves no database and no temporary file
check "a larger capture" quiet "$CSTRACE" synth --arch aarch64 --out perf --plugin -o big.data -- \
  "$progs/aarch64/bigloop" 400000
"$CSTRACE" export -o killed.db big.data >/dev/null 2>&1 &
parent=$!
for _ in $(seq 200); do ls killed.db.tmp.* >/dev/null 2>&1 && break; sleep 0.05; done
check "the export writes under a temporary name" bash -c "ls killed.db.tmp.* >/dev/null 2>&1"
child=$(pgrep -P $parent | head -1)
[ -n "$child" ] && kill -KILL "$child"
wait $parent
check "killed: exit by a signal" test $? -gt 128
check "killed: no database" test ! -e killed.db
check "killed: no temporary file" test -z "$(ls | grep '^killed\.db')"

# progress on a terminal (script(1) gives it one), never on a pipe
if command -v script >/dev/null; then
  script -qec "'$CSTRACE' export -f -o tty.db big.data" /dev/null >tty 2>&1
  check "progress on a tty: exporting N/M MB" grep -aq $'\rexporting [0-9.]*/[0-9.]* MB' tty
  "$CSTRACE" export -f -o tty.db big.data 2>notty
  check "... not on a pipe" test ! -s notty
fi

# --stats; --no-calls; a snapshot
check "--stats" bash -c "'$CSTRACE' export --stats -f -o s.db rec.data 2>&1 | grep -q '^[0-9]* samples, [0-9]* calls'"
check "--no-calls" quiet "$CSTRACE" export --no-calls -o nc.db rec.data
check "... no calls tables or views" test \
  "$(q nc.db "SELECT count(*) FROM sqlite_master WHERE name LIKE 'call%'")" -eq 0
check "... the same samples" test "$(q nc.db 'SELECT count(*) FROM samples')" = "$(q one.db 'SELECT count(*) FROM samples')"
check "a snapshot" quiet "$CSTRACE" export -o snap.db "$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop"
check "... its branches and calls" test "$(q snap.db 'SELECT count(*) > 100, count(DISTINCT branch_type) > 2 FROM samples')" = "1|1"
check "... event \"branches\" (no recorded event to name modifiers)" test \
  "$(q snap.db 'SELECT name FROM selected_events WHERE id = 1')" = branches
finish
