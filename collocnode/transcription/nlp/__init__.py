"""The structured NLP of a transcribed problem: per-node functions, global sparsity and scatter,
the MX graph, JIT compilation, Hessian choices and the proximal re-solve."""

#: 0.2's ``collocnode.transcription.nlp`` was one module; its names moved to these modules (the
#: modules that define them first: structured.py imports some of the others' names)
_HOMES_OF_02_NAMES = (
    "collocnode.transcription.nlp.samples",
    "collocnode.transcription.nlp.quadratic",
    "collocnode.transcription.nlp.node_map",
    "collocnode.transcription.nlp.structured",
)


def __getattr__(name: str) -> object:
    import importlib

    from ...tools.moved import moved_name

    for home in _HOMES_OF_02_NAMES:
        if hasattr(importlib.import_module(home), name):
            return moved_name(__name__, name, {name: home})
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
