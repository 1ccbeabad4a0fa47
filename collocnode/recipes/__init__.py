"""How each system is trained by collocation: the recipes shared by the experiments and the
comparison (neither of which imports the other)."""
