"""The options every method of the comparison shares, those of the gradient-trained methods, and
how overrides are applied to them.

Each method has a frozen options dataclass. `TrainerOptions` holds what every method
shares (epochs or iterations, network widths, activation, seed, ...); `GradientOptions`
adds what only the methods trained by gradient descent have (learning rate and its decay, batch
size, optimizer, device, dtype). A comparison passes one set of settings to all of its methods,
so a method whose options lack a gradient setting accepts it and ignores it (collocation runs
on the CPU with IPOPT whatever ``device`` says); any other unknown name is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from ... import _validation as v
from .device import DTYPES, check_device_name

OptionsT = TypeVar("OptionsT", bound="TrainerOptions")


@dataclass(frozen=True)
class TrainerOptions:
    """Options every method shares.

    Attributes:
        epochs: passes over the training samples (iterations, for an optimiser that has no
            epochs).
        hidden: widths of the hidden layers of the network(s).
        activation: hidden-layer activation (see ``collocnode.nn.ACTIVATIONS``).
        init: weight initialisation of the MLP spec (``collocnode.nn._mlp.INITS``);
            ``"xavier_normal"`` starts the biases at zero, ``"xavier_normal_torch_bias"`` keeps
            ``torch.nn.Linear``'s uniform biases as the FNODE and MBD-NODE authors' code does.
        normalize: put the training data's input mean/std and output std into the MLP spec
            (``input_shift``/``input_scale``/``output_scale``) so the net sees order-one signals;
            the papers train on raw signals (False).
        param_inputs: names of system parameters μ appended to the network input (values from
            each trajectory's ``params``), e.g. a friction coefficient.
        seed: seed of the weight initialisation (and of the batch order, where there is one).
    """

    epochs: int = 100
    hidden: tuple[int, ...] = (256, 256)
    activation: str = "tanh"
    init: str = "xavier_normal"
    normalize: bool = False
    param_inputs: tuple[str, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        from ...nn._activations import ACTIVATIONS
        from ...nn._mlp import INITS

        v.positive_int("epochs", self.epochs)
        if isinstance(self.hidden, (str, bytes)) or not isinstance(self.hidden, int | Sequence):
            raise TypeError(f"hidden must be an int or a sequence of ints, got {self.hidden!r}")
        hidden = (self.hidden,) if isinstance(self.hidden, int) else tuple(self.hidden)
        for i, h in enumerate(hidden):
            v.positive_int(f"hidden[{i}]", h)
        object.__setattr__(self, "hidden", hidden)
        v.choice("activation", self.activation, ACTIVATIONS)
        v.choice("init", self.init, INITS)
        if not isinstance(self.normalize, bool):
            raise TypeError(f"normalize must be a bool, got {self.normalize!r}")
        names = (self.param_inputs,) if isinstance(self.param_inputs, str) else self.param_inputs
        object.__setattr__(self, "param_inputs", tuple(str(n) for n in names))
        v.nonnegative_int("seed", self.seed)


@dataclass(frozen=True)
class GradientOptions(TrainerOptions):
    """Options of the methods trained by gradient descent (Adam or AdamW with an exponential
    learning-rate decay per epoch).

    Attributes:
        lr: initial learning rate.
        lr_decay: factor of the exponential learning-rate decay, applied once per epoch.
        weight_decay: L2 weight decay (decoupled when ``optimizer="adamw"``).
        grad_clip: clip the global gradient norm to this value (None: no clipping).
        batch_size: samples per optimizer step (the FNODE/MBD-NODE papers use 1).
        optimizer: "adam" or "adamw".
        device: "auto" (CUDA if available, else CPU), "cpu", "cuda" or "cuda:N".
        dtype: "float64" or "float32". The methods whose seed papers' code trains in float32
            (FNODE, MBD-NODE, LSTM, FCNN, HNN, LNN) default to it; the others (the sequential
            NODE with adaptive steps, SNDE, MNN) to float64.
        cuda_graph: on a CUDA device, capture one training step as a CUDA graph and replay it
            (the LSTM and the FCNN; `collocnode.compare.methods.graphed_step`): the same
            updates with one launch per step instead of dozens. An error on the CPU or for
            another method.
    """

    lr: float = 1e-3
    lr_decay: float = 0.98
    weight_decay: float = 0.0
    grad_clip: float | None = None
    batch_size: int = 1
    optimizer: str = "adam"
    device: str = "auto"
    dtype: str = "float64"
    cuda_graph: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        v.positive_float("lr", self.lr)
        decay = v.positive_float("lr_decay", self.lr_decay)
        if decay > 1.0:
            raise ValueError(f"lr_decay must be in (0, 1], got {self.lr_decay}")
        v.nonnegative_float("weight_decay", self.weight_decay)
        if self.grad_clip is not None:
            v.positive_float("grad_clip", self.grad_clip)
        v.positive_int("batch_size", self.batch_size)
        v.choice("optimizer", self.optimizer, ("adam", "adamw"))
        check_device_name(self.device)
        v.choice("dtype", self.dtype, DTYPES)
        if not isinstance(self.cuda_graph, bool):
            raise TypeError(f"cuda_graph must be a bool, got {self.cuda_graph!r}")


def gradient_settings() -> tuple[str, ...]:
    """The option names that `GradientOptions` adds to `TrainerOptions`."""
    shared = {f.name for f in fields(TrainerOptions)}
    return tuple(f.name for f in fields(GradientOptions) if f.name not in shared)


def replace_options(opts: OptionsT, **changes: Any) -> OptionsT:
    """``dataclasses.replace`` that names an unknown option and lists the valid ones.

    Gradient settings (`gradient_settings`) given to options that lack them are checked
    as `GradientOptions` would check them and then ignored (see the module docstring).
    """
    valid = [f.name for f in fields(opts)]
    foreign = set(gradient_settings()) - set(valid)
    ignored = {key: val for key, val in changes.items() if key in foreign}
    for key in changes:
        if key not in valid and key not in ignored:
            raise ValueError(
                f"unknown option {key!r} of {type(opts).__name__}; valid: {', '.join(valid)}"
            )
    if ignored:
        GradientOptions(**ignored)  # one clear error for a bad value, even of an unused setting
    return replace(opts, **{key: val for key, val in changes.items() if key not in ignored})
