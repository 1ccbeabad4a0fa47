"""IPOPT: its options, the two backends (CasADi ``nlpsol`` and cyipopt) and the per-iteration
callback."""
