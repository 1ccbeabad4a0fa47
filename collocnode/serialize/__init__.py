"""Trained models in one file: save on one side, load on either (CasADi or torch).

A model file is UTF-8 JSON, written atomically (temporary file, then rename)::

    {
      "format": "collocnode-model",
      "format_version": 1,
      "library_version": "0.2.0",
      "model": {
        "recipe": {"function": "collocnode.models:NeuralODE", "kwargs": {...}},
        "n_states": 2, "n_inputs": 0, "n_outputs": 0, "n_params": 102,
        "state_names": [...], "input_names": [...], "output_names": [...],
        "blocks": {"f0": {"type": "MLP", "fields": {...}}, ...},
        "slices": {"f0": [0, 51], ...}
      },
      "p": [...],                    # the parameter vector, shortest round-trip float repr
      "p_sha256": "...",             # of p as little-endian float64 bytes
      "metadata": {...}              # free-form: problem, training settings, status, ...
    }

The physics of a hybrid model is Python code, so a model is stored as its *recipe*
(`HybridModel.recipe`): the name of the registered *model builder* that
built it and that builder's keyword arguments. Blocks are stored by type name and dataclass
fields (their input and output scales, i.e. the normalisation, are fields), systems by registry
name, preset and parameters, and physical [`Parameter`][collocnode.Parameter] objects by their
fields. ``blocks``, ``slices`` and the sizes are written for readers of the file and checked
against the rebuilt model on loading.

JSON writes every float with its shortest round-trip representation, so ``p`` comes back bit for
bit and a loaded model reproduces the saved model's rollout exactly on the same machine.

A model file is data; loading one never imports or calls anything the file names:

* the recipe names a model builder, matched by exact name against the library's own builders
  (``collocnode.models:NeuralODE``, ``collocnode.recipes.qvm:hybrid_model``; files of 0.1.0 that
  name ``collocnode.experiments.qvm:hybrid_model`` load with the latter) and the builders the user
  registered with [`register_builder`][collocnode.serialize.register_builder] or passed as
  ``load_model(..., builders=...)``;
* the builder's keyword arguments are checked against its signature and type annotations before
  it is called; they can only be JSON values, float64/int64 arrays, blocks
  ([`MLP`][collocnode.nn.MLP], [`RationalChebyshev`][collocnode.nn.RationalChebyshev]), registered
  systems ([`collocnode.problems.get`][collocnode.problems.get] with the system's own parameters)
  and Parameters;
* sizes are bounded before anything is allocated: the file (``max_bytes``, default 64 MiB), every
  array (shape checked against its data, at most `MAX_ELEMENTS` elements), every block (no
  more weights than ``p`` holds; an MLP lists its scales in full) and the nesting depth
  (`MAX_DEPTH`).
"""

from ._builders import Builder, register_builder
from ._files import LoadedModel, load_model, save_model
from ._format import (
    DEFAULT_MAX_BYTES,
    FORMAT,
    FORMAT_VERSION,
    MAX_DEPTH,
    MAX_ELEMENTS,
    MAX_NDIM,
    SUPPORTED_VERSIONS,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_DEPTH",
    "MAX_ELEMENTS",
    "MAX_NDIM",
    "SUPPORTED_VERSIONS",
    "Builder",
    "LoadedModel",
    "load_model",
    "register_builder",
    "save_model",
]
