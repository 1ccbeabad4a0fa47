"""Train PyTorch methods on one problem and compare them.

    python scripts/compare.py smsd --methods fnode,mbdnode --quick
    python scripts/compare.py double_pendulum --methods fnode,mbdnode,lstm,fcnn --out runs/dp
    python scripts/compare.py qvm --quick     # collocation, node, fnode, mbdnode, mnn, snde

Writes compare.json and compare.md into --out (default runs/compare-<problem>-<timestamp>).
Bad input exits with code 2 and one line on stderr (a traceback only with --debug).
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import time
from pathlib import Path


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and exit code 2, like every bad input
        self.exit(2, f"{self.prog}: error: {message}\n")


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = _Parser(prog="compare.py", description=__doc__.split("\n\n")[0])
    p.add_argument("problem", help="registered problem name, e.g. smsd, double_pendulum")
    p.add_argument(
        "--methods",
        default=None,
        help="comma-separated method names (default: fnode,mbdnode; for qvm every applicable "
        "method: collocation,node,fnode,mbdnode,mnn,snde)",
    )
    p.add_argument("--preset", default=None, help="preset of the problem (default: its first)")
    p.add_argument("--quick", action="store_true", help="few epochs, small nets and data")
    p.add_argument("--out", default=None, help="output directory")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=None, help="override every method's epochs")
    p.add_argument("--budget", type=float, default=None, help="wall-time budget per method [s]")
    p.add_argument(
        "--noise",
        type=float,
        default=None,
        help="std of Gaussian state noise (default 0; for qvm a fraction of each signal's std, "
        "default 0.02)",
    )
    p.add_argument("--eval-every", type=float, default=None, help="test-error curve cadence [s]")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="METHOD.OPTION=VALUE",
        help="override one option of one method, e.g. fnode.targets=fd (repeatable)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p.parse_args(argv)


def _writable(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {str(out)!r} cannot be created: {exc.strerror}") from None
    if not out.is_dir() or not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"--out {str(out)!r} is not a writable directory")


def _overrides(items: list[str]) -> dict[str, dict[str, object]]:
    """``["fnode.targets=fd", "mbdnode.hidden=(64, 64)"]`` -> {"fnode": {"targets": "fd"}, ...};
    values are Python literals where they parse as one, strings otherwise."""
    out: dict[str, dict[str, object]] = {}
    for item in items:
        key, sep, text = item.partition("=")
        method, dot, option = key.partition(".")
        if not sep or not dot or not method or not option:
            raise ValueError(f"--set expects METHOD.OPTION=VALUE, got {item!r}")
        try:
            value: object = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        out.setdefault(method, {})[option] = value
    return out


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    try:
        from collocnode.compare import make_trainer
        from collocnode.compare.harness import CompareConfig, default_methods, parse_methods

        if args.budget is not None and not args.budget > 0:
            raise ValueError(f"--budget must be > 0 seconds, got {args.budget:g}")
        if args.epochs is not None and args.epochs <= 0:
            raise ValueError(f"--epochs must be a positive integer, got {args.epochs}")
        options = _overrides(args.set)
        methods = parse_methods(args.methods or ",".join(default_methods(args.problem)))
        for method, opts in options.items():
            if method not in methods:
                raise ValueError(f"--set names method {method!r}, which --methods does not run")
            make_trainer(method, args.problem, quick=args.quick, **opts)  # validates the options
        cfg = CompareConfig(
            problem=args.problem,
            methods=methods,
            preset=args.preset,
            quick=args.quick,
            epochs=args.epochs,
            budget_s=args.budget,
            device=args.device,
            seed=args.seed,
            noise=args.noise,
            eval_every_s=args.eval_every,
            threads=args.threads,
            options=options,
        )
        stamp = time.strftime("%Y%m%d-%H%M%S")
        out = Path(args.out or f"runs/compare-{args.problem}-{stamp}")
        _writable(out)
    except (ValueError, TypeError) as exc:
        if args.debug:
            raise
        print(f"compare.py: error: {exc}", file=sys.stderr)
        return 2

    from collocnode.compare.harness import run

    try:
        report = run(cfg, out, progress=not args.no_progress, log=print)
    except KeyboardInterrupt:
        print("interrupted; finished methods are in " + str(out), file=sys.stderr)
        return 130
    failed = [r["method"] for r in report["rows"] if r["status"] == "failed"]
    print(f"wrote {out / 'compare.json'} and {out / 'compare.md'}")
    if failed and args.debug:
        for r in report["rows"]:
            if r.get("traceback"):
                print(r["traceback"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
