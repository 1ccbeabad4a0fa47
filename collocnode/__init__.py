"""collocnode: learn dynamics from trajectory data by direct collocation and NLP.

Training a (physics-enhanced) neural ODE is posed as one dynamic optimization problem,
transcribed with Radau IIA collocation and solved by IPOPT with exact sparse Hessians.
"""

from .data import Trajectory

__version__ = "0.1.0"

__all__ = ["Trajectory", "__version__"]
