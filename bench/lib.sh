# Shared by the bench scripts (sourced).

# once CMD...: run CMD with its output thrown away; print "cpu wall" in seconds
# (cpu = user + sys), or "fail fail" when it failed.
once() {
  local TIMEFORMAT='%U %S %R' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1) || { echo "fail fail"; return; }
  awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.3f %.3f\n", a[1] + a[2], a[3] }'
}

# best_of RUNS CMD_ARRAY_NAME CPU_ARRAY_NAME WALL_ARRAY_NAME: run every command of
# the array RUNS times, interleaved so that machine load hits all alike, keeping
# each one's best CPU time and the wall time of that run.
best_of() {
  local runs=$1 i c w
  local -n cmds_=$2 cpu_=$3 wall_=$4
  for _ in $(seq "$runs"); do
    for i in "${!cmds_[@]}"; do
      read -r c w < <(once ${cmds_[$i]})
      [ "$c" != fail ] || { echo "bench: '${cmds_[$i]}' failed" >&2; exit 1; }
      if [ -z "${cpu_[$i]:-}" ] || awk -v a="$c" -v b="${cpu_[$i]}" 'BEGIN{exit !(a<b)}'; then
        cpu_[$i]=$c; wall_[$i]=$w
      fi
    done
  done
}
