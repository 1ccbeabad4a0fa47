"""IPOPT: its options, the two backends (CasADi ``nlpsol`` and cyipopt) and the per-iteration
callback."""


def __getattr__(name: str) -> object:
    # 0.2's ``collocnode.transcription.ipopt`` was one module; its names moved to
    # collocnode.transcription.ipopt.backends
    import importlib

    from ...tools.moved import moved_name

    home = importlib.import_module("collocnode.transcription.ipopt.backends")
    if not hasattr(home, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return moved_name(__name__, name, {name: "collocnode.transcription.ipopt.backends"})
