# What the --threads tests share (sourced after tests/lib.sh): every verb run with
# --threads 1 and then 2 to 4 must print the same, and the runs must really cut.
# same NAME TRACE VERBS CHUNKS [ARGS...]: each verb with --threads 1, then 2..4 at
# each chunk size, must print the same.
said() {
  # (each thread's reader has a range cache of its own: --stats' hits differ)
  grep -v -e "decoded apart (the others" -e "decoded ahead of the time order" \
          -e "of the elements by cstrace's own decoder$" \
          -e "^qemu: uncaught target signal" "$1" |
    sed 's/ranges symbolized ([0-9]* from the cache)/ranges symbolized/'
}
same() {
  local name=$1 trace=$2 verbs=$3 chunks=$4
  shift 4
  local IFS_SAVE=$IFS
  IFS=,
  for verb in $verbs; do
    IFS=$IFS_SAVE
    # shellcheck disable=SC2086 # verb holds its options
    "$CSTRACE" $verb --threads 1 "$@" "$trace" > "$TMP/one" 2> "$TMP/one.err"
    local rc1=$?
    for t in 2 3 4; do
      for cs in $chunks; do
        # shellcheck disable=SC2086
        "$CSTRACE" $verb --threads $t --chunk-size $cs "$@" "$trace" > "$TMP/many" 2> "$TMP/many.err"
        local rc=$?
        if ! cmp -s "$TMP/one" "$TMP/many"; then
          diff "$TMP/one" "$TMP/many" | head -6 >&2
          fail "$name: $verb --threads $t --chunk-size $cs: output differs from one thread's"
        else
          pass
        fi
        # Under qemu-user (the cross stages) the emulator reports each crashed
        # child itself; how many children a crash took is not cstrace's message.
        # (how the threads shared the work, and how many elements cstrace's
        # decoders made rather than OpenCSD's, is not the output)
        check "$name: $verb --threads $t --chunk-size $cs: same messages: $(head -c 300 "$TMP/many.err")" \
          cmp -s <(said "$TMP/one.err") <(said "$TMP/many.err")
        check "$name: $verb --threads $t --chunk-size $cs: exit status $rc, one thread $rc1" [ $rc -eq $rc1 ]
      done
    done
    IFS=,
  done
  IFS=$IFS_SAVE
}

# apart NAME MIN CHUNK TRACE [ARGS...]: decoding on 4 threads cut the trace and
# took at least MIN chunks from their own decoder. How many depends on how soon
# each worker starts (a chunk no worker has started yet is decoded by the one
# before), which a loaded machine delays: the best of up to eight runs counts
# (CI once had 3 of 16 chunks apart, three times in a row, where 4 is usual).
# With OpenCSD's decoder: cstrace's own decodes a small chunk before another
# worker has started the next (CI: 14 of 129 chunks of 4K at best, where 16 were
# asked), and it is the split that is checked here, not the decoder.
apart() {
  local name=$1 min=$2 cs=$3 trace=$4 best=0 n said
  shift 4
  for _ in 1 2 3 4 5 6 7 8; do
    said=$("$CSTRACE" decode --stats --format=none --threads 4 --chunk-size "$cs" \
             --decoder=opencsd "$@" "$trace" 2>&1)
    n=$(echo "$said" | sed -n 's/.* chunks, \([0-9]*\) decoded apart.*/\1/p')
    [ "${n:-0}" -gt $best ] && best=${n:-0}
    [ $best -ge "$min" ] && break
  done
  check "$name: at least $min chunks of $cs decoded apart (got $best; the last run said: $(echo "$said" | tail -2 | head -c 300))" \
    [ $best -ge "$min" ]
}

# viewed NAME TRACE VERB [ARGS...]: on 2 threads in 4K chunks, views on the
# decoding threads handled elements of VERB there (a view that never starts
# printing would give the one-thread output too, all of it on one thread).
viewed() {
  local name=$1 trace=$2 verb=$3 said
  shift 3
  # shellcheck disable=SC2086 # verb holds its options
  said=$(CSTRACE_DEBUG=1 "$CSTRACE" $verb --threads 2 --chunk-size 4K "$@" "$trace" 2>&1 >/dev/null |
           grep "elements handled on the decoding threads")
  check "$name: $verb: views printed on the decoding threads: ${said:-(none said)}" \
    grep -q "views: [1-9][0-9]* elements" <<< "$said"
}
