"""The structured NLP of a transcribed problem: per-node functions, global sparsity and scatter,
the MX graph, JIT compilation, Hessian choices and the proximal re-solve."""
