"""Tools every layer above may use: atomic files, threads, task pools, machine facts, bounded
initial-value integration, fixed-step integrators, derivative estimates, figures and options
dataclasses. Nothing here knows models, problems or training."""
