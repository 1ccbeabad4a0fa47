"""The command lines of ``scripts/``: ``train_collocation.py`` and ``compare.py`` (the
reproduction report's command, ``scripts/reproduction_report.py``, is repository bookkeeping
in ``benchmarks/reproduction/``, outside the package).

Shared behaviour: options come from the option dataclasses (nested ones by their flat field names,
`collocnode._cli.parsing`); bad input is one ``prog: error: message`` line on stderr and exit code 2
(a traceback only with ``--debug``; the codes are in `collocnode._cli.exits`); ``--out`` is a run
folder, marked and locked while a command runs there (`collocnode._cli.run_folder`), whose units of
work are written into it durably as they finish while the summary is staged and moved in when the
run ends, however it ends; ``--resume`` continues it (after kill -9 too), ``--overwrite`` replaces
only a run folder and only with a run that succeeded (`collocnode._cli.output`); Ctrl-C, and SIGTERM
(`collocnode._cli.signals`), write what the run has so far with status "interrupted" and the phase
it stopped in, and exit with 130; a storage error is phase "storage", exit 1, one line.

One module per command: `collocnode._cli.train_command`, `collocnode._cli.compare_command`.
"""

from .compare_command import compare
from .train_command import train_collocation

__all__ = ["compare", "train_collocation"]
