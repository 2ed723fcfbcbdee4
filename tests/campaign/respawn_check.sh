#!/bin/sh
# tests/campaign/respawn_check.sh N: the --check of a kill-point campaign of
# examples/ulfm/respawn_deaths.c at N ranks. A run is right when no line says
# FAIL and each old rank r has at most one OK line, from itself (rank r) or from
# the process that took its place last (rank 100+r), and at most as many old
# ranks as the run's rule kills have none (a death after the last agreement is
# not recovered from); the program itself checks each state against the
# failure-free computation and each rank's place.
n=${1:?usage: respawn_check.sh N}
out=${CAMPAIGN_OUT:?}
if grep -qE '^rank [0-9]+: FAIL' "$out"; then
  grep -E '^rank [0-9]+: FAIL' "$out" | head -n 3
  exit 1
fi
kills=0
[ -n "${CAMPAIGN_KILL:-}" ] && kills=$(printf '%s\n' "$CAMPAIGN_KILL" | tr ';' '\n' | grep -c .)
r=0 none=0
while [ "$r" -lt "$n" ]; do
  c=$(grep -cE "^rank ($r|$((100 + r))): OK" "$out")
  if [ "$c" -gt 1 ]; then
    echo "old rank $r: $c OK lines"
    exit 1
  fi
  [ "$c" = 0 ] && none=$((none + 1))
  r=$((r + 1))
done
if [ "$none" -gt "$kills" ]; then
  echo "$none old ranks without an OK line, $kills killed by the rule"
  exit 1
fi
