"""The structured NLP of a transcribed problem: per-node functions, global sparsity and scatter,
JIT compilation, Hessian choices and the proximal re-solve."""


def __getattr__(name: str) -> object:
    # 0.2's ``collocnode.transcription.nlp`` was one module; its names moved to
    # collocnode.transcription.nlp.structured
    import importlib

    from ...tools.moved import moved_name

    home = importlib.import_module("collocnode.transcription.nlp.structured")
    if not hasattr(home, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return moved_name(__name__, name, {name: "collocnode.transcription.nlp.structured"})
