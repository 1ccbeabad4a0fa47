#!/usr/bin/env bash
# Every run quoted in docs/results.md, docs/performance.md and docs/control.md, in order. Each writes into
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
run vdp-parametric-floor python benchmarks/vdp_parametric_floor.py --noise 0.1 --seeds 100 \
  --json "$out/vdp_parametric_floor.json"
for lam in 1e-5 1e-4 1e-3 1e-2; do
  run "vdp-robust-0.1-lambda$lam" python scripts/train_collocation.py vdp --noise 0.1 --seeds 20 \
    --warm-start --regularization "$lam" --out "$out/vdp-robust-0.1-lambda$lam"
done
run compare-qvm-quick python scripts/compare.py qvm --quick --out "$out/compare-qvm-quick" --no-progress
run compare-qvm-node-20x python scripts/compare.py qvm --quick --methods collocation,node --budget 270 \
  --eval-every 20 --set node.epochs=100000 --set node.shooting=1000 --set node.batch_size=3 \
  --set "node.hidden=(128, 128)" --set node.lr_decay=1.0 --set node.normalize=True \
  --set node.predict_rtol=1e-7 --set node.predict_atol=1e-7 --out "$out/compare-qvm-node-20x" --no-progress
for w in 5 32; do
  run "quasi-newton-width$w" python benchmarks/quasi_newton_vdp.py --widths "$w"
done
run quasi-newton-width64 python benchmarks/quasi_newton_vdp.py --widths 64 --hessians limited-memory
run snde-stable-time python benchmarks/snde_stable_time.py --systems two_body,rigid_body,dcdc --trials 3 \
  --seeds 1 --epochs two_body=60,rigid_body=40,dcdc=10 --batch-size 64 --budget 600 --jobs 3 \
  --threads 1 --out "$out/snde_stable_time"
run multi-trajectory python benchmarks/multi_trajectory_vdp.py --json "$out/multi_trajectory.json"
run vdp-robust-0-warm python scripts/train_collocation.py vdp --noise 0 --seeds 100 --warm-start \
  --out "$out/vdp-robust-0-warm"
run control-accuracy python benchmarks/control_accuracy.py --json "$out/control_accuracy.json"
run control-opti python benchmarks/control_opti.py --intervals 2000 --stages 3 --repeats 3 \
  --json "$out/control_opti.json"
run admm-trajectories python benchmarks/admm_consensus.py trajectories --rounds 60 --repeats 3 \
  --json "$out/admm_trajectories.json"
run admm-windows python benchmarks/admm_consensus.py windows --rounds 60 --repeats 3 \
  --json "$out/admm_windows.json"
run admm-warm-start python benchmarks/admm_consensus.py trajectories --trajectories 8 --held-out 8 \
  --blocks 2 --rounds 40 --repeats 3 --json "$out/admm_warm.json"
run admm-cold-start python benchmarks/admm_consensus.py trajectories --trajectories 8 --held-out 8 \
  --blocks 2 --rounds 40 --repeats 3 --no-warm-start --json "$out/admm_cold.json"
run compare-cart-pole-fnode-code python scripts/compare.py cart_pole --preset fnode_code --methods fnode \
  --seed 0 --out "$out/cp_code"
