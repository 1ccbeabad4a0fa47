"""The command lines of ``scripts/``: ``train_collocation.py``, ``compare.py`` and
``reproduction_report.py``.

Shared behaviour: options come from the option dataclasses (nested ones by their flat field
names, :mod:`.parsing`); bad input is one ``prog: error: message`` line on stderr and exit code
2 (a traceback only with ``--debug``; the codes are in :mod:`.exits`); every run writes into a
fresh temporary sibling of ``--out`` that is renamed to ``--out`` when the run ends, however it
ends, so two runs never mix their files; a non-empty ``--out`` is refused unless
``--overwrite`` (:mod:`.output`); Ctrl-C, and SIGTERM (:mod:`.signals`), write what the run has
so far with status "interrupted" and the phase it stopped in, and exit with 130.

One module per command: :mod:`.train_command`, :mod:`.compare_command`,
:mod:`.report_command`.
"""

from .compare_command import compare
from .report_command import reproduction_report
from .train_command import train_collocation

__all__ = ["compare", "reproduction_report", "train_collocation"]
