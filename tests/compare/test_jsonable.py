"""The one JSON sanitiser (``collocnode.tools._io.jsonable``) that every JSON file goes through."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from collocnode._status import SolverStatus
from collocnode.tools._io import jsonable, write_json


class Row(Mapping):
    """A mapping that is not a dict (like the comparison's rows)."""

    def __init__(self, **kw):
        self._kw = kw

    def __getitem__(self, key):
        return self._kw[key]

    def __iter__(self):
        return iter(self._kw)

    def __len__(self):
        return len(self._kw)


def test_numbers_arrays_enums_and_non_finite_values():
    data = {
        "f": np.float64(1.5),
        "f32": np.float32(0.25),
        "i": np.int64(3),
        "b": np.bool_(True),
        "nan": math.nan,
        "inf": np.float64(np.inf),
        "arr": np.array([[1.0, np.nan], [2.0, 3.0]]),
        "tuple": (1, (2.0, -math.inf)),
        "status": SolverStatus.ITERATION_LIMIT,
        1: "int key",
    }
    out = jsonable(data)
    assert out == {
        "f": 1.5,
        "f32": 0.25,
        "i": 3,
        "b": True,
        "nan": None,
        "inf": None,
        "arr": [[1.0, None], [2.0, 3.0]],
        "tuple": [1, [2.0, None]],
        "status": "iteration_limit",
        "1": "int key",
    }
    assert type(out["i"]) is int and type(out["b"]) is bool and type(out["f"]) is float
    json.dumps(out, allow_nan=False)  # strict JSON


def test_any_mapping_is_an_object():
    rows = [Row(method="fnode", test_mse=np.float64(np.nan)), MappingProxyType({"a": (1, 2)})]
    assert jsonable({"rows": rows}) == {
        "rows": [{"method": "fnode", "test_mse": None}, {"a": [1, 2]}]
    }


def test_write_json_is_strict(tmp_path):
    path = write_json(tmp_path / "r.json", {"x": [np.inf, 1.0], "y": np.arange(2)})
    text = path.read_text()
    assert "Infinity" not in text and "NaN" not in text and text.endswith("\n")
    assert json.loads(text) == {"x": [None, 1.0], "y": [0, 1]}
