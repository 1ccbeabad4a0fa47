#!/usr/bin/env bash
# Every run quoted in docs/results.md and docs/performance.md, in order. Each writes into
# runs/reproduce/<name>; together they take several hours on a 2-core machine.
# Usage: bash benchmarks/reproduce.sh [name ...]   (no names: all)
set -euo pipefail
cd "$(dirname "$0")/.."
out=runs/reproduce
mkdir -p "$out"
SELECTED="$*"

run() {
  local name=$1
  shift
  if [ -z "$SELECTED" ] || [[ " $SELECTED " == *" $name "* ]]; then
    echo "== $name: $*"
    "$@"
  fi
}

run vdp-timing python benchmarks/vdp_timing.py --repeats 5 --json "$out/vdp_timing.json"
for s in 0 0.1 0.5; do
  run "vdp-sigma$s" python scripts/train_collocation.py vdp --noise "$s" --out "$out/vdp-sigma$s"
done
run vdp-robust-0 python scripts/train_collocation.py vdp --noise 0 --seeds 100 --out "$out/vdp-robust-0"
run vdp-robust-0.1-warm python scripts/train_collocation.py vdp --noise 0.1 --seeds 100 --warm-start \
  --out "$out/vdp-robust-0.1-warm"
for s in II III I; do
  run "qvm-$s" python scripts/train_collocation.py qvm --strategy "$s" --out "$out/qvm-$s"
done
run compare-vdp python scripts/compare.py vdp --methods collocation,node --budget 120 --set node.epochs=100000 \
  --out "$out/compare-vdp" --no-progress
for p in smsd tmsd double_pendulum cart_pole slider_crank; do
  run "collocation-$p" python scripts/train_collocation.py "$p" --out "$out/collocation-$p"
  run "compare-$p" python scripts/compare.py "$p" --methods fnode,mbdnode --threads 1 \
    --out "$out/compare-$p" --no-progress
done
run warmstart python benchmarks/warmstart_vdp.py --seeds 20 --noise 0 0.1 --metis
run refinement python benchmarks/refinement.py --tol 1e-6 --seeds 3
