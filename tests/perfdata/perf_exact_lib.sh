# Byte-for-byte comparison of `cstrace script` with Debian's perf script on one
# perf.data, for perf's --itrace choices and -F fields (sourced by the perf peer
# tests). perf_exact NAME FILE CASE...: each CASE is "ITRACE [OPTIONS]" (ib is
# what perf does without --itrace); cstrace must print what perf prints, to the
# byte, and fail where perf fails.
PERF=${PERF:-perf}

# The cases most files get: every field perf knows for cs_etm, the defaults,
# the instruction periods, +field and -field, --ns.
EXACT_CASES=(
	"ib" "b" "i1i" "i100" "i1ib" "i7ib -F ip,addr,flags,period,insnlen"
	"b -F comm,pid,tid,cpu,period,event,flags,ip,sym,symoff,dso,addr,insn,insnlen"
	"i1i -F comm,pid,tid,cpu,period,event,flags,ip,sym,symoff,dso,insn,insnlen"
	"b -F +flags" "i3i -F -cpu,+flags" "b -F ip,addr" "i1i -F ip,addr" "b --ns -F +flags"
)

perf_exact() { # name file case...
	local name=$1 f=$2 c it; shift 2
	for c in "$@"; do
		local ps cs
		read -r it rest <<<"$c"
		# shellcheck disable=SC2086
		"$PERF" script -i "$f" --itrace="$it" $rest >"$TMP/pe.perf" 2>"$TMP/pe.perf.err"
		ps=$?
		# shellcheck disable=SC2086
		"$CSTRACE" script --itrace="$it" $rest "$f" >"$TMP/pe.cst" 2>"$TMP/pe.cst.err"
		cs=$?
		pe_same "$name: script $c" $ps $cs
		# branch samples only: the lines are made on the decoding threads too
		# (cst_pscript_run); in 1 KiB chunks even a small file is cut up
		case $it in
		*i*) ;;
		*)
			# shellcheck disable=SC2086
			"$CSTRACE" script --threads 2 --chunk-size 1K --itrace="$it" $rest "$f" \
				>"$TMP/pe.cst" 2>"$TMP/pe.cst.err"
			pe_same "$name: script --threads 2 --chunk-size 1K $c" $ps $?
			;;
		esac
	done
}

pe_same() { # what perf status cstrace-status: $TMP/pe.perf against $TMP/pe.cst
	if cmp -s "$TMP/pe.perf" "$TMP/pe.cst" && [ $(($2 == 0)) = $(($3 == 0)) ]; then
		pass
	else
		fail "$1: not perf's lines ($(wc -l <"$TMP/pe.perf") from perf, $(wc -l <"$TMP/pe.cst") from cstrace)"
		diff "$TMP/pe.perf" "$TMP/pe.cst" | head -6
		head -3 "$TMP/pe.cst.err"
	fi
}
