#!/usr/bin/env bash
# Every run quoted in docs/results.md, docs/performance.md and docs/control.md, in order. Each writes into
# runs/reproduce/<name>; together they take several hours on a 2-core machine.
# Usage: bash benchmarks/reproduce.sh [name ...]   (no names: all)
# The rows of the seed papers' multibody tables run once per seed of SEEDS (default "0 1 2"),
# each into runs/reproduce/<name>/seed<K>; SEEDS="1 2" bash benchmarks/reproduce.sh NAME runs
# two of them. docs/results.md says what each costs.
set -euo pipefail
cd "$(dirname "$0")/.."
out=runs/reproduce
mkdir -p "$out"
SELECTED="$*"
SEEDS=${SEEDS:-0 1 2}

# A run that fails (a solve stopped short of convergence, a failed method) is a result too:
# the runs after it, the next seed's included, still run, and the script exits 1 at the end
# naming the runs that failed.
FAILED=()
run() {
  local name=$1 rc=0
  shift
  if [ -z "$SELECTED" ] || [[ " $SELECTED " == *" $name "* ]]; then
    echo "== $name: $*"
    "$@" || rc=$?
    if [ "$rc" != 0 ]; then
      echo "== $name: exit $rc"
      FAILED+=("$name (exit $rc)")
    fi
  fi
}

run vdp-timing python benchmarks/vdp_timing.py --repeats 5 --json "$out/vdp_timing.json"
# One collocation training per seed of SEEDS (noise realisation and initial weights), each into
# runs/reproduce/<name>/seed<K> (store its result.json in benchmarks/results/<name>/seed<K>)
train_seeds() {
  local name=$1 seed
  shift
  for seed in $SEEDS; do
    run "$name" python scripts/train_collocation.py "$@" --seed "$seed" --out "$out/$name/seed$seed"
  done
}
# GDOPT Table 3 (docs/results.md's generated table)
train_seeds gdopt-table3-sigma0 vdp --noise 0 --no-warm-start
train_seeds gdopt-table3-sigma0.1 vdp --noise 0.1 --no-warm-start
train_seeds gdopt-table3-sigma0.5 vdp --noise 0.5 --no-warm-start
run vdp-robust-0 python scripts/train_collocation.py vdp --noise 0 --seeds 100 --no-warm-start --out "$out/vdp-robust-0"
run vdp-robust-0.1-warm python scripts/train_collocation.py vdp --noise 0.1 --seeds 100 --warm-start \
  --out "$out/vdp-robust-0.1-warm"
# GDOPT Table 1 (generated table): five states and the objective's stagnation rule only, not
# the experiment's defaults (strategy W, four states, settled characteristics)
QVM_PAPER=(--no-road-as-input --settle-rtol 0)
for s in II III I; do
  train_seeds "gdopt-table1-$s" qvm --strategy "$s" "${QVM_PAPER[@]}"
done
train_seeds gdopt-table1-III-paper qvm --strategy III --rational-form paper "${QVM_PAPER[@]}"
# eq. 19 as written, started by a least-squares fit of the rational functions to the observed
# accelerations through the physics (strategy W's regression); strategy I with more iterations
train_seeds gdopt-table1-III-W-paper qvm --strategy III-W --rational-form paper "${QVM_PAPER[@]}"
train_seeds gdopt-table1-I-400 qvm --strategy I --max-iter 400 "${QVM_PAPER[@]}"
# strategy II at five times the noise (10 % of each signal's standard deviation), the robustness
# case of the paper's reference [2]
train_seeds gdopt-table1-II-noise5 qvm --strategy II --noise 0.1 "${QVM_PAPER[@]}"
run compare-vdp python scripts/compare.py vdp --methods collocation,node --budget 120 --set node.epochs=100000 \
  --out "$out/compare-vdp" --no-progress
# FNODE Table 13: the methods at the FNODE paper's settings (its Tables 3-8), with collocation,
# each trained to its paper epoch count (no budget), once per seed.
compare_fnode() {
  local name=$1 problem=$2 methods=$3 seed
  shift 3
  for seed in $SEEDS; do
    run "$name" python scripts/compare.py "$problem" "$@" --methods "$methods" \
      --threads 1 --seed "$seed" --no-progress --out "$out/$name/seed$seed"
  done
}
# A row's LSTM, most of the row's cost, trained on its own: on LSTM_DEVICE (default cpu;
# LSTM_DEVICE=cuda on a GPU, where an epoch took 0.5-0.7x one CPU thread's time), into
# runs/reproduce/<row>/seed<K>-<device> beside the row's other methods (store it as
# benchmarks/results/<row>/seed<K>-<device>/compare.json). The entry is the row's name + "-lstm".
# On a CUDA device each training step is replayed from a CUDA graph (LSTM_CUDA_GRAPH=0: eager).
LSTM_DEVICE=${LSTM_DEVICE:-cpu}
LSTM_CUDA_GRAPH=${LSTM_CUDA_GRAPH:-1}
compare_lstm() {
  local name=$1 problem=$2 seed graph=()
  shift 2
  if [[ $LSTM_DEVICE == cuda* && $LSTM_CUDA_GRAPH == 1 ]]; then
    graph=(--set lstm.cuda_graph=true)
  fi
  for seed in $SEEDS; do
    run "$name" python scripts/compare.py "$problem" "$@" "${graph[@]}" --methods lstm \
      --device "$LSTM_DEVICE" --threads 1 --seed "$seed" --no-progress \
      --out "$out/${name%-lstm}/seed$seed-$LSTM_DEVICE"
  done
}
ALL=fnode,mbdnode,lstm,fcnn,collocation
NO_LSTM=fnode,mbdnode,fcnn,collocation
# One method of a row, once per seed (a diagnostic row, or a method rerun on its own).
compare_seeds() {
  local name=$1 problem=$2 seed
  shift 2
  for seed in $SEEDS; do
    run "$name" python scripts/compare.py "$problem" "$@" --threads 1 --seed "$seed" --no-progress \
      --out "$out/$name/seed$seed"
  done
}
# The systems of the FNODE authors' first release of their code (2025-11-18, commit 8d00a6c of
# uwsbel/sbel-reproducibility), the version closest to the paper: the cubic spring of
# mbdnode_cubic and the double pendulum released from (pi/2, pi/4)
compare_fnode fnode-table13-smsd smsd $NO_LSTM --preset mbdnode_cubic
compare_lstm fnode-table13-smsd-lstm smsd --preset mbdnode_cubic
# FNODE on the sampling of the authors' later script (2026): 8000 steps of 0.005 s, 5 % train,
# with the exact acceleration labels it asks for (--fnode_accel_mtd analytical)
compare_seeds fnode-table13-smsd-fnode smsd --preset fnode_code --methods fnode \
  --set fnode.targets=exact
compare_fnode fnode-table13-tmsd tmsd $NO_LSTM
compare_lstm fnode-table13-tmsd-lstm tmsd
# FNODE on the same data with finite-difference labels: a diagnostic of the label method
compare_seeds fnode-table13-tmsd-fnode-fd tmsd --methods fnode --set fnode.targets=fd
compare_fnode fnode-table13-double_pendulum double_pendulum $NO_LSTM --preset mbdnode
compare_lstm fnode-table13-double_pendulum-lstm double_pendulum --preset mbdnode
compare_fnode fnode-table13-cart_pole cart_pole $ALL --preset fnode_code
# ... its LSTM on its own, for another device (the row above trains it on the CPU with the rest)
compare_lstm fnode-table13-cart_pole-lstm cart_pole --preset fnode_code
compare_fnode fnode-table13-slider_crank slider_crank $NO_LSTM --preset fnode_bb
compare_lstm fnode-table13-slider_crank-lstm slider_crank --preset fnode_bb
# ... its LSTM on (θ1, θ1') only, the states the authors' code generates and its LSTM learns
compare_seeds fnode-table13-slider_crank-lstm-partition slider_crank --preset fnode_bb \
  --methods lstm --set lstm.partition=true
# ... its LSTM trained on full windows only and rolled out from the first 16 true states, as the
# authors' code does (their start; the row's LSTM pads the first windows and starts from x(0))
compare_seeds fnode-table13-slider_crank-lstm-data-start slider_crank --preset fnode_bb \
  --methods lstm --set lstm.start=data
# ... where the LSTMs' roll-outs leave the truth (reads the seeds' folders of the three entries)
run fnode-table13-slider_crank-lstm-drift python benchmarks/rollout_drift.py \
  $(for s in $SEEDS; do echo "$out/fnode-table13-slider_crank/seed$s-$LSTM_DEVICE"; done) \
  $(for s in $SEEDS; do echo "$out/fnode-table13-slider_crank-lstm-partition/seed$s"; done) \
  $(for s in $SEEDS; do echo "$out/fnode-table13-slider_crank-lstm-data-start/seed$s"; done)
# The slider-crank of the authors' first release (fnode_bb_2025: a slider damper and a weaker
# wall spring), the system their code run here (fnode-table13-authors-code) trains on
compare_fnode fnode-table13-slider_crank-2025 slider_crank $NO_LSTM --preset fnode_bb_2025
compare_lstm fnode-table13-slider_crank-2025-lstm slider_crank --preset fnode_bb_2025
# The FCNN reading time as the authors' code feeds it (t / 0.1 s: their slider-crank's time column
# counts 0.1 per 0.01 s sample) instead of scaled to [0, 1] over the training window, on each system
compare_seeds fnode-table13-slider_crank-2025-fcnn-time slider_crank --preset fnode_bb_2025 \
  --methods fcnn --set fcnn.time_unit=0.1
compare_seeds fnode-table13-slider_crank-fcnn-time slider_crank --preset fnode_bb --methods fcnn \
  --set fcnn.time_unit=0.1
# FNODE on the first release's system with that release's command: two hidden layers (its
# --layers default), a learning rate of 1e-3 decaying by 0.98 per epoch, where the paper's
# Table 6 and the row above have three hidden layers, 5e-4 and 0.99
compare_seeds fnode-table13-slider_crank-2025-fnode-code slider_crank --preset fnode_bb_2025 \
  --methods fnode --set fnode.hidden=256,256 --set fnode.lr=1e-3 --set fnode.lr_decay=0.98
# FNODE Fig. 2: the single mass-spring over 30 s, rolled out by RK4 and by leapfrog (FNODE_LF)
compare_seeds fnode-fig2-sms-rk4 sms --methods fnode --set fnode.integrator=rk4
compare_seeds fnode-fig2-sms-lf sms --methods fnode --set fnode.integrator=leapfrog
# the same leapfrog FNODE on central-difference labels (0.035 % RMS label error on this window,
# against 2.0 % for the hybrid labels as printed): a diagnostic of the label method
compare_seeds fnode-fig2-sms-lf-fd sms --methods fnode --set fnode.integrator=leapfrog \
  --set fnode.targets=fd
# FNODE's 4-DOF vehicle (Fig. 25, its Tables 9-11): one parameter instance (the grid's nominal
# centre), not the paper's 262,144
compare_seeds fnode-vehicle4dof vehicle4dof --methods fnode
# The FNODE authors' own code, run here with the commands of their run_experiments.sh (one fresh
# copy of their folder per command, --device cpu). SBEL is a clone of
# https://github.com/uwsbel/sbel-reproducibility; their code needs pandas, matplotlib, tqdm,
# torchdiffeq, scikit-learn. First release (the paper's systems): git -C "$SBEL" checkout 8d00a6c
SBEL=${SBEL:-sbel-reproducibility}
run fnode-table13-authors-code python benchmarks/authors_code_fnode.py "$SBEL/2025/FNODE" \
  --timeout 4200 --out "$out/fnode-table13-authors-code"
# their generated data against the presets of our rows (one epoch each; data_check.json)
run fnode-table13-authors-data python benchmarks/authors_code_fnode.py "$SBEL/2025/FNODE" \
  --runs fnode:Single_Mass_Spring_Damper,fnode:Triple_Mass_Spring_Damper,fnode:Cart_Pole,fnode:Double_Pendulum,fnode:Slider_Crank \
  --data-only --out "$out/fnode-table13-authors-code"
# ... their FNODE, MBD-NODE and LSTM on the slider-crank trained with two more seeds (the
# published commands' is 42; the LSTM takes 31 min per seed)
for seed in 0 1; do
  run fnode-table13-authors-code-seeds python benchmarks/authors_code_fnode.py "$SBEL/2025/FNODE" \
    --runs fnode:Slider_Crank,mbdnode:Slider_Crank,lstm:Slider_Crank --seed "$seed" \
    --timeout 4200 --out "$out/fnode-table13-authors-code/seed$seed"
done
# ... and their later script's FNODE commands for the single mass-spring-damper and the double
# pendulum: git -C "$SBEL" checkout cf9884a
run fnode-table13-authors-code-2026 python benchmarks/authors_code_fnode.py "$SBEL/2025/FNODE" \
  --runs fnode:Single_Mass_Spring_Damper,fnode:Double_Pendulum \
  --out "$out/fnode-table13-authors-code-2026"
# ... and their code of 2026-02-11, whose slider-crank generator is the preset fnode_bb of the
# table's row: git -C "$SBEL" checkout 95a7cbd
run fnode-table13-authors-code-bb python benchmarks/authors_code_fnode.py "$SBEL/2025/FNODE" \
  --runs lstm:Slider_Crank,fnode:Slider_Crank,mbdnode:Slider_Crank,fcnn:Slider_Crank \
  --timeout 4200 --data-preset Slider_Crank=fnode_bb --out "$out/fnode-table13-authors-code-bb"
run fnode-table13-authors-data-bb python benchmarks/authors_code_fnode.py "$SBEL/2025/FNODE" \
  --runs fnode:Slider_Crank --data-only --data-preset Slider_Crank=fnode_bb \
  --out "$out/fnode-table13-authors-code-bb"
for seed in 0 1; do
  run fnode-table13-authors-code-bb-seeds python benchmarks/authors_code_fnode.py \
    "$SBEL/2025/FNODE" --runs fnode:Slider_Crank,mbdnode:Slider_Crank,lstm:Slider_Crank \
    --seed "$seed" --timeout 4200 --data-preset Slider_Crank=fnode_bb \
    --out "$out/fnode-table13-authors-code-bb/seed$seed"
done
# ... and their FNODE and MBD-NODE trained and scored on fnode_bb's exact solution instead of
# their backward-Euler samples (--exact-data; their scripts load the files it writes), the
# published seed and two more
run fnode-table13-authors-code-bb-exact python benchmarks/authors_code_fnode.py "$SBEL/2025/FNODE" \
  --runs mbdnode:Slider_Crank,fnode:Slider_Crank --exact-data --data-preset Slider_Crank=fnode_bb \
  --timeout 4200 --out "$out/fnode-table13-authors-code-bb-exact"
for seed in 0 1; do
  run fnode-table13-authors-code-bb-exact-seeds python benchmarks/authors_code_fnode.py \
    "$SBEL/2025/FNODE" --runs mbdnode:Slider_Crank,fnode:Slider_Crank --exact-data \
    --data-preset Slider_Crank=fnode_bb --seed "$seed" --timeout 4200 \
    --out "$out/fnode-table13-authors-code-bb-exact/seed$seed"
done
# One epoch of each PyTorch method against the authors' code (both releases above: FNODE at the
# first release, 8d00a6c), the same machine, alternately; docs/results.md's speed table
run epoch-time python benchmarks/epoch_time.py --fnode-code "$SBEL/2025/FNODE" \
  --mbdnode-code "$SBEL/2024/MNODE-code" --epochs 4 --repeats 3 --json "$out/epoch-time/epoch_time.json"
# ... and its slider-crank cases, which the default run leaves out
run epoch-time-slider_crank python benchmarks/epoch_time.py --fnode-code "$SBEL/2025/FNODE" \
  --cases fnode13-fnode-slider_crank,fnode13-mbdnode-slider_crank,fnode13-lstm-slider_crank,fnode13-fcnn-slider_crank \
  --json "$out/epoch-time-slider_crank/epoch_time.json"
# MBD-NODE Table 4 at the MBD-NODE paper's settings (its Tables 6-12; LSTM of 3 layers as its code)
compare_mbdnode() {
  local name=$1 problem=$2 node_epochs=$3 node_lr=$4 fcnn_decay=$5 seed
  shift 5
  for seed in $SEEDS; do
    run "$name" python scripts/compare.py "$problem" "$@" --methods mbdnode,fcnn --threads 1 \
      --set mbdnode.epochs="$node_epochs" --set mbdnode.lr="$node_lr" --set fcnn.epochs=600 \
      --set fcnn.lr=5e-4 --set fcnn.lr_decay="$fcnn_decay" --seed "$seed" --no-progress \
      --out "$out/$name/seed$seed"
  done
}
# ... and its LSTM (3 layers, as its code), trained on its own (compare_lstm above)
compare_mbdnode_lstm() {
  local name=$1 problem=$2
  shift 2
  compare_lstm "$name" "$problem" "$@" --set lstm.epochs=400 --set lstm.lr=5e-4 --set lstm.layers=3
}
# the single mass-spring: the symplectic MBD-NODE of Table 4 (the authors' script's settings),
# our acceleration network stepped by leapfrog, HNN and LNN
compare_seeds mbdnode-table4-sms sms --methods mbdnode_symplectic,mbdnode,hnn,lnn
# MBD-NODE Table 13's YS4 and FK6 rows: the same symplectic MBD-NODE trained and rolled out with
# Yoshida's 4th- and 6th-order compositions of Störmer–Verlet (3 and 7 steps per step)
compare_seeds mbdnode-table13-sms-yoshida4 sms --methods mbdnode_symplectic \
  --set mbdnode_symplectic.integrator=yoshida4
compare_seeds mbdnode-table13-sms-fukushima6 sms --methods mbdnode_symplectic \
  --set mbdnode_symplectic.integrator=fukushima6
# MBD-NODE Table 5's RK4 rows: MBD-NODE in Cartesian coordinates (its Table 6: 300 epochs,
# decay 0.98) and the known equations, with the MBD-NODE code's first-order "RK4" and with the
# textbook RK4
compare_seeds mbdnode-table5-sms-rk4-code sms --methods mbdnode,numerical --set mbdnode.epochs=300 \
  --set mbdnode.lr_decay=0.98 --set mbdnode.integrator=rk4_mbdnode_code \
  --set numerical.integrator=rk4_mbdnode_code
compare_seeds mbdnode-table5-sms-rk4 sms --methods mbdnode,numerical --set mbdnode.epochs=300 \
  --set mbdnode.lr_decay=0.98 --set mbdnode.integrator=rk4 --set numerical.integrator=rk4
compare_mbdnode mbdnode-table4-smsd smsd 350 1e-3 0.98 --preset mbdnode_arrays
compare_mbdnode_lstm mbdnode-table4-smsd-lstm smsd --preset mbdnode_arrays
compare_mbdnode mbdnode-table4-tmsd tmsd 350 6e-4 0.98 --preset mbdnode_arrays
compare_mbdnode_lstm mbdnode-table4-tmsd-lstm tmsd --preset mbdnode_arrays
compare_mbdnode mbdnode-table4-pendulum pendulum 400 6e-4 0.98
compare_mbdnode_lstm mbdnode-table4-pendulum-lstm pendulum
# the same MBD-NODE trained and rolled out with the released code's first-order "RK4"
compare_seeds mbdnode-table4-pendulum-code-rk4 pendulum --methods mbdnode --set mbdnode.epochs=400 \
  --set mbdnode.lr=6e-4 --set mbdnode.integrator=rk4_mbdnode_code
compare_mbdnode mbdnode-table4-double_pendulum double_pendulum 450 1e-3 0.99 --preset mbdnode
compare_mbdnode_lstm mbdnode-table4-double_pendulum-lstm double_pendulum --preset mbdnode
compare_mbdnode mbdnode-table4-cart_pole cart_pole 450 1e-3 0.99 --preset mbdnode
compare_mbdnode_lstm mbdnode-table4-cart_pole-lstm cart_pole --preset mbdnode
# MBD-NODE Table 13: MBD-NODE trained and rolled out with forward Euler and the midpoint rule
# (Table 4's settings otherwise), beside the known equations stepped alike
compare_integrator() {
  local name=$1 problem=$2 integrator=$3 epochs=$4 lr=$5
  shift 5
  compare_seeds "$name" "$problem" "$@" --methods mbdnode,numerical --set mbdnode.epochs="$epochs" \
    --set mbdnode.lr="$lr" --set mbdnode.integrator="$integrator" \
    --set numerical.integrator="$integrator"
}
compare_integrator mbdnode-table13-smsd-euler smsd euler 350 1e-3 --preset mbdnode_arrays
compare_integrator mbdnode-table13-smsd-midpoint smsd midpoint 350 1e-3 --preset mbdnode_arrays
compare_integrator mbdnode-table13-tmsd-euler tmsd euler 350 6e-4 --preset mbdnode_arrays
compare_integrator mbdnode-table13-tmsd-midpoint tmsd midpoint 350 6e-4 --preset mbdnode_arrays
compare_integrator mbdnode-table13-pendulum-euler pendulum euler 400 6e-4
compare_integrator mbdnode-table13-pendulum-midpoint pendulum midpoint 400 6e-4
compare_integrator mbdnode-table13-double_pendulum-euler double_pendulum euler 450 1e-3 --preset mbdnode
compare_integrator mbdnode-table13-double_pendulum-midpoint double_pendulum midpoint 450 1e-3 \
  --preset mbdnode
compare_integrator mbdnode-table13-cart_pole-euler cart_pole euler 450 1e-3 --preset mbdnode
compare_integrator mbdnode-table13-cart_pole-midpoint cart_pole midpoint 450 1e-3 --preset mbdnode
# The MBD-NODE authors' own code at the paper's settings (one fresh copy of their folder per run,
# on the CPU; the config entries set are in RUNS of the script). Their code needs matplotlib,
# scikit-learn, autograd and torchdiffeq. Every entry of RUNS but their LSTM on the double
# pendulum (our LSTM is within 3x of the paper there).
mnode_runs=mbdnode:Single_Mass_Spring_Damper,mbdnode:Triple_Mass_Spring_Damper
mnode_runs+=,mbdnode:Double_Pendulum,mbdnode:Single_Mass_Spring_Symplectic
mnode_runs+=,fcnn:Single_Mass_Spring_Damper,fcnn:Triple_Mass_Spring_Damper,fcnn:Double_Pendulum
mnode_runs+=,lstm:Single_Mass_Spring_Damper,lstm:Triple_Mass_Spring_Damper
mnode_runs+=,hnn:Single_Mass_Spring_Symplectic,mbdnode:Single_Mass_Spring
run mbdnode-table4-authors-code python benchmarks/authors_code_mbdnode.py "$SBEL/2024/MNODE-code" \
  --runs "$mnode_runs" --jobs 2 --out "$out/mbdnode-table4-authors-code"
# FCNN's spread over its initial weights: seeds 1-4 beside the rows' seed 0
for problem in smsd tmsd; do
  for seed in 1 2 3 4; do
    run mbdnode-table4-fcnn-seeds python scripts/compare.py "$problem" --preset mbdnode_arrays \
      --methods fcnn --threads 1 --budget 900 --set fcnn.epochs=600 --set fcnn.lr=5e-4 \
      --set fcnn.lr_decay=0.98 --set fcnn.seed="$seed" --no-progress \
      --out "$out/mbdnode-table4-fcnn-seeds/$problem-seed$seed"
  done
done
# FCNN and MBD-NODE with the biases of the authors' code: torch.nn.Linear's own, xavier_normal_
# applied to the weights only (our xavier_normal starts the biases at zero)
compare_fcnn_torch_bias() {
  local name=$1 problem=$2 decay=$3
  shift 3
  compare_seeds "$name" "$problem" "$@" --methods fcnn --set fcnn.epochs=600 --set fcnn.lr=5e-4 \
    --set fcnn.lr_decay="$decay" --set fcnn.init=xavier_normal_torch_bias
}
compare_fcnn_torch_bias mbdnode-table4-smsd-fcnn-torch-bias smsd 0.98 --preset mbdnode_arrays
compare_fcnn_torch_bias mbdnode-table4-tmsd-fcnn-torch-bias tmsd 0.98 --preset mbdnode_arrays
compare_fcnn_torch_bias mbdnode-table4-cart_pole-fcnn-torch-bias cart_pole 0.99 --preset mbdnode
compare_seeds mbdnode-table4-cart_pole-mbdnode-torch-bias cart_pole --preset mbdnode --methods mbdnode \
  --set mbdnode.epochs=450 --set mbdnode.lr=1e-3 --set mbdnode.init=xavier_normal_torch_bias
# the LSTM with the output layer of the authors' code (torch.nn.Linear's own initialisation)
compare_seeds mbdnode-table4-cart_pole-lstm-torch-init cart_pole --preset mbdnode --methods lstm \
  --set lstm.epochs=400 --set lstm.lr=5e-4 --set lstm.layers=3 --set lstm.init=torch_default
# the LSTM started as the authors' code starts it: trained on the windows inside the data and
# rolled out from the first 16 true states
compare_seeds mbdnode-table4-cart_pole-lstm-data-start cart_pole --preset mbdnode --methods lstm \
  --set lstm.epochs=400 --set lstm.lr=5e-4 --set lstm.layers=3 --set lstm.start=data
# ... and which half of that start matters: the LSTM trained both ways, each rolled out both ways
for seed in $SEEDS; do
  run mbdnode-table4-cart_pole-lstm-start python benchmarks/lstm_start.py --seed "$seed" \
    --json "$out/mbdnode-table4-cart_pole-lstm-start/seed$seed/lstm_start.json"
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
# The full quarter-vehicle comparison (docs/compare_qvm.md): collocation's strategy W alone on one core;
# its training time (135 s when measured) sets the PyTorch methods' budget, 20x = 2700 s, with
# test-road errors at 1x, 5x and 10x; they run two at a time, one torch thread each; then
# collocation is added to the same run (the stored methods are reused, it trains alone).
QVM_W=(--set collocation.strategy=W --set collocation.road_as_input=True
  --set collocation.stagnation_window=10 --set collocation.stagnation_rtol=1e-3)
QVM_BUDGET=(--budget 2700 --eval-at 135,675,1350 --threads 1 --workers 2 --no-progress)
run compare-qvm-collocation env OMP_NUM_THREADS=1 taskset -c 0 python scripts/compare.py qvm \
  --methods collocation "${QVM_W[@]}" --no-progress --out "$out/compare-qvm-collocation"
run compare-qvm python scripts/compare.py qvm --methods node,fnode,mbdnode,mnn,snde \
  "${QVM_BUDGET[@]}" --out "$out/compare-qvm"
run compare-qvm python scripts/compare.py qvm --methods collocation,node,fnode,mbdnode,mnn,snde \
  "${QVM_W[@]}" "${QVM_BUDGET[@]}" --resume --out "$out/compare-qvm"
for w in 5 32; do
  run "quasi-newton-width$w" python benchmarks/quasi_newton_vdp.py --widths "$w"
done
run quasi-newton-width64 python benchmarks/quasi_newton_vdp.py --widths 64 --hessians limited-memory
run snde-table3 python benchmarks/snde_stable_time.py --systems two_body,rigid_body,dcdc --trials 20 \
  --seeds 1 --epochs two_body=1000,rigid_body=500,dcdc=100 --batch-size 64 --budget 1800 --jobs 3 \
  --threads 1 --out "$out/snde-table3"
# ... three trained pairs per system (seeds 0, 1, 2, their trials pooled; with --jobs 2 two seeds
# at a time)
run snde-table3-two_body-seeds python benchmarks/snde_stable_time.py --systems two_body --trials 20 \
  --seeds 3 --epochs two_body=1000 --batch-size 64 --budget 1800 --threads 1 \
  --out "$out/snde-table3-two_body-seeds"
run snde-table3-rigid_body-seeds python benchmarks/snde_stable_time.py --systems rigid_body \
  --trials 20 --seeds 3 --epochs rigid_body=500 --batch-size 64 --budget 1800 --jobs 2 --threads 1 \
  --out "$out/snde-table3-rigid_body-seeds"
run snde-table3-dcdc-seeds python benchmarks/snde_stable_time.py --systems dcdc --trials 20 \
  --seeds 3 --epochs dcdc=100 --batch-size 64 --budget 1800 --jobs 2 --threads 1 \
  --out "$out/snde-table3-dcdc-seeds"
# ... and the DC-DC row at the paper's 1000 epochs. Its SNODE first, a unit per core and nothing
# else running: on a 2-core AMD EPYC two units at once took 2974-2979 s of the 3600 s budget and
# 59.5 min more for their 20 rollouts each; beside two other runs a unit stopped at 893-987
# epochs.
run snde-table3-dcdc-1000-snode python benchmarks/snde_stable_time.py --systems dcdc \
  --models snode --trials 20 --seeds 3 --epochs dcdc=1000 --batch-size 64 --budget 3600 \
  --jobs 2 --threads 1 --out "$out/snde-table3-dcdc-1000-snode"
# Then its NODE (Table 3 is the NODE's stable time; 56-73 min per seed on one core for the 1000
# epochs and 20 rollouts), the SNODE's units taken from the run above: the row has both columns
run snde-table3-dcdc-1000 python benchmarks/snde_stable_time.py --systems dcdc \
  --models node,snode --trials 20 --seeds 3 --epochs dcdc=1000 --batch-size 64 --budget 3600 \
  --jobs 2 --threads 1 --out "$out/snde-table3-dcdc-1000" \
  --units-from "$out/snde-table3-dcdc-1000-snode/stable_time.json"
# SNDE Fig. 2 and 8 on the rigid body: the NODE, ANODE, SNODE, SANODE and tangent projection on
# the same data (Table 4's settings), 500 epochs at 64 chunks per update, 10 trials of 400 s
run snde-baselines-rigid_body python benchmarks/snde_stable_time.py --systems rigid_body \
  --models node,anode,snode,sanode,tpo --trials 10 --epochs rigid_body=500 --batch-size 64 \
  --horizon 400 --seeds 3 --jobs 2 --threads 1 --out "$out/snde-baselines-rigid_body"
# ... and the two-body problem's (Fig. 2, top row) over the paper's 200 s trials: no TPO, whose
# projection is onto the rigid body's sphere
run snde-baselines-two_body python benchmarks/snde_stable_time.py --systems two_body \
  --models node,anode,snode,sanode --trials 10 --epochs two_body=1000 --batch-size 64 \
  --seeds 3 --jobs 2 --threads 1 --out "$out/snde-baselines-two_body"
# ... and the DC-DC converter's (Fig. 2, bottom row) over the paper's 160 s trials, the Table 3
# row's 100 epochs, three trained sets (seeds 0, 1, 2)
run snde-baselines-dcdc python benchmarks/snde_stable_time.py --systems dcdc \
  --models node,anode,snode,sanode --trials 10 --epochs dcdc=100 --batch-size 64 --seeds 3 \
  --jobs 2 --threads 1 --out "$out/snde-baselines-dcdc"
# ... and SNDE App. D.1's HNN on the two-body problem (Fig. 8, top row): the NODE's options, a
# tanh network of the state for the Hamiltonian, trained through the solver (the SNDE code's ReLU
# network of the squared state, --models hnn_code, plateaus at a training loss of 0.048)
run snde-hnn-two_body python benchmarks/snde_stable_time.py --systems two_body --models hnn \
  --trials 10 --epochs two_body=1000 --batch-size 64 --seeds 3 --jobs 2 --threads 1 \
  --out "$out/snde-hnn-two_body"
# ... and where the SANODE's drift off the sphere comes from (its figures in docs/results.md)
run snde-sanode-drift python benchmarks/sanode_drift.py \
  --json "$out/snde-sanode-drift/sanode_drift.json"
run snde-sanode-drift-augmented-loss python benchmarks/sanode_drift.py --augmented-loss \
  --json "$out/snde-sanode-drift-augmented-loss/sanode_drift.json"
# ... and for the SANODEs of seeds 1 and 2, which leave the sphere in about half their trials
# (16-34 min each on one core of a 2-core AMD EPYC beside other runs: 500 epochs, then three
# 400 s rollouts)
run snde-sanode-drift-augmented-loss-seed1 python benchmarks/sanode_drift.py --seed 1 \
  --augmented-loss --json "$out/snde-sanode-drift-augmented-loss-seed1/sanode_drift.json"
run snde-sanode-drift-augmented-loss-seed2 python benchmarks/sanode_drift.py --seed 2 \
  --augmented-loss --json "$out/snde-sanode-drift-augmented-loss-seed2/sanode_drift.json"
# SNDE Table 3 at the paper's protocol: one chunk per update (batch size 1), 1000 epochs on every
# system, 100 test trials, three model pairs; dopri5 where the paper has Tsit5 (torchdiffeq has
# no Tsit5). docs/results.md estimates its cost
run snde-table3-paper python benchmarks/snde_stable_time.py --systems two_body,rigid_body,dcdc \
  --trials 100 --seeds 3 --epochs 1000 --batch-size 1 --jobs 1 --threads 1 --out "$out/snde-table3-paper"
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
run admm-accelerated python benchmarks/admm_consensus.py trajectories --rounds 60 --repeats 3 \
  --workers 2 --acceleration --json "$out/admm_accelerated.json"
run admm-warm-start python benchmarks/admm_consensus.py trajectories --trajectories 8 --held-out 8 \
  --blocks 2 --rounds 40 --repeats 3 --json "$out/admm_warm.json"
run admm-cold-start python benchmarks/admm_consensus.py trajectories --trajectories 8 --held-out 8 \
  --blocks 2 --rounds 40 --repeats 3 --no-warm-start --json "$out/admm_cold.json"
run admm-qvm-windows python benchmarks/admm_qvm.py windows --rounds 20 --workers 1,2,8 \
  --json "$out/admm_qvm_windows.json"
run admm-qvm-roads python benchmarks/admm_qvm.py roads --roads 8 --workers 8 --rounds 12 \
  --json "$out/admm_qvm_roads.json"
run admm-qvm-roads-single python benchmarks/admm_qvm.py roads --single-roads 8 --single-iterations 0 \
  --workers 0 --json "$out/admm_qvm_roads_single.json"
run compare-cart-pole-fnode-code python scripts/compare.py cart_pole --preset fnode_code --methods fnode \
  --seed 0 --out "$out/cp_code"
# Learn, discover, re-fit on the Lotka-Volterra UDE (docs/discovery.md): 5 seeds x 3 lambdas,
# timings medians of 3 runs
run discovery-lv python benchmarks/discovery_lv.py --seeds 0,1,2,3,4 --repeats 3 \
  --lambdas 1e-5,1e-4,1e-3 --json "$out/discovery-lv/discovery_lv.json"
# MNN §5.1 (docs/results.md's generated table mnn-discovery): SINDy, MNN discovery and
# collocation + discovery on the planar, Lorenz, tanh and rational systems (hours on 2 cores)
run mnn-discovery python benchmarks/mnn_discovery.py --json "$out/mnn-discovery/discovery.json"
# ... Lorenz's collocation + discovery alone, each IPOPT solve limited to 40 minutes, merged into
# the stored record (whose Lorenz row had SINDy and MNN only)
run mnn-discovery-lorenz python benchmarks/mnn_discovery.py --systems lorenz --methods collocation \
  --max-wall-time 2400 --merge-into benchmarks/results/mnn-discovery/discovery.json \
  --json "$out/mnn-discovery/discovery.json"
# MNN §5.4 (generated table mnn-physical): mass ratio and force law from one two-body trajectory
run mnn-two-body python benchmarks/mnn_two_body.py --json "$out/mnn-two-body/two_body.json"
# MNN Table 2 (generated table mnn-table2): NeuRLP against torchdiffeq RK4 on a CUDA GPU (the
# stored run: an H100, one run per length; its 1000 steps did not fit the machine's 10-minute
# command limit) and on the CPU (medians of 3)
run mnn-table2-gpu python benchmarks/mnn_solver_timing.py --device cuda --iterations 100 \
  --repeats 1 --json "$out/mnn-table2-gpu/solver_timing.json"
run mnn-table2-cpu python benchmarks/mnn_solver_timing.py --device cpu --threads 1 --iterations 100 \
  --repeats 3 --json "$out/mnn-table2-cpu/solver_timing.json"
if [ ${#FAILED[@]} -gt 0 ]; then
  printf '== did not succeed: %s\n' "${FAILED[@]}"
  exit 1
fi
