#!/bin/sh
# fuzz.sh FUZZTIME PKG:TARGET...: runs each Go fuzz target for FUZZTIME
# ($GO, default go). A finding writes testdata/fuzz/<target>/<hash> and
# fails. On a loaded machine Go's fuzz coordinator may end a clean run with
# "context deadline exceeded" and no failing input; that alone is retried
# once.
set -u
time=$1; shift
go=${GO:-go}
for pf in "$@"; do
  pkg=${pf%%:*}; f=${pf##*:}
  for try in 1 2; do
    out=$($go test -run '^$' -fuzz "^$f\$" -fuzztime "$time" -parallel 2 "$pkg" 2>&1); rc=$?
    echo "fuzz $pkg $f for $time (try $try): $(echo "$out" | grep -E '^fuzz: elapsed' | tail -1)"
    [ $rc = 0 ] && break
    if [ $try = 1 ] && echo "$out" | grep -q 'context deadline exceeded' && ! echo "$out" | grep -q 'Failing input written'; then continue; fi
    echo "$out"; exit 1
  done
done
