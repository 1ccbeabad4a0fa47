"""PEtab SciML neural networks: the YAML network file, its HDF5 parameters, and the network
evaluated in CasADi (so that it can sit in an ODE right-hand side or an observable).

A network file (the ``petab_sciml`` library's YAML format) holds ``nn_model_id``, ``inputs`` (one
``input_id`` per argument of the forward pass), ``layers`` (``layer_id``, ``layer_type``: a
``torch.nn`` module's name, ``args``: its constructor arguments) and ``forward``: a torch.fx
graph, nodes with ``name``, ``op`` (``placeholder``, ``call_module``, ``call_method``,
``call_function``, ``output``), ``target``, ``args`` and ``kwargs``.

The file is data only. It is parsed with ``yaml.safe_load``, and every ``layer_type`` and
``target`` is looked up in fixed tables (`LAYER_TYPES`, `METHODS`,
`FUNCTIONS`); nothing named in the file is imported or run. The tables hold what CasADi
expresses exactly: the layers ``Linear``, ``Bilinear``, ``LayerNorm``, ``InstanceNorm1d/2d/3d``,
``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d`` (stride, padding, dilation, groups; padding modes
``zeros``, ``reflect``, ``replicate``, ``circular``), the pooling layers ``MaxPool``,
``AvgPool``, ``LPPool``, ``AdaptiveMaxPool`` and ``AdaptiveAvgPool`` (each 1d, 2d and 3d),
``Flatten``, ``Identity`` and the activation modules; the elementwise activations (tanh,
sigmoid, relu, relu6, leaky_relu, elu, celu, selu, gelu, silu, mish, softplus, log_sigmoid,
softsign, tanhshrink, hardtanh, hardsigmoid, hardswish); softmax and log_softmax; and the graph
operations cat, flatten, reshape/view, add, sub, mul, truediv. Anything else (dropout, batch
norm, the functional forms of convolution and pooling, indexing, ...) is refused with one
`UnsupportedError` naming the file, the layer or node and the type, and so are arguments of a
supported layer that change what it returns (``return_indices=True``,
``track_running_stats=True``). Max pooling is a fold of ``fmax``: exact, its derivative a
subgradient where entries tie.

Conventions (PyTorch's, as in the PEtab SciML test suite):

* A tensor has PyTorch's shape ``s``; in CasADi it is a column of ``prod(s)`` entries in
  row-major (C, PyTorch) order. ``Linear``, ``Bilinear`` and ``LayerNorm`` act on the last
  axes, so a 1-D input ``(in,)`` is one sample and ``(N, in)`` is ``N`` samples.
* Convolutions, pooling and ``InstanceNorm`` take channels-first inputs, ``(C, *spatial)`` (one
  sample) or ``(N, C, *spatial)``, as PyTorch.
* Parameters are ``{layer_id: {array_id: array}}`` with PyTorch's names and shapes, e.g.
  ``Linear``: ``weight`` ``(out, in)`` and ``bias`` ``(out,)``; ``Conv2d``: ``weight``
  ``(out, in/groups, kh, kw)``; ``ConvTranspose2d``: ``weight`` ``(in, out/groups, kh, kw)``.
  In HDF5 they are the datasets ``/parameters/<nn_model_id>/<layer_id>/<array_id>`` beside
  the scalar ``/metadata/pytorch_format = 1`` (uint8).
* Input and output array files hold ``/inputs/<id>/data`` and ``/outputs/<id>/data``
  (`read_arrays_hdf5`).

The modules, each importing only those listed before it: ``_errors``; ``_tensor`` (tensors and
shape utilities); ``_args`` (argument specifications and binding); ``_activations``; ``_ops``
(softmax, flatten, reshape, cat, binary operations); ``_functions`` (`FUNCTIONS`,
`METHODS`); ``_layer_type`` (``LayerType``); ``_windows`` (sliding windows over spatial axes,
gathered by index); ``_conv`` (convolutions); ``_pool`` (pooling); ``_layers``
(`LAYER_TYPES`); ``_hdf5`` (array files); ``_parameters``; ``_network`` (`Network` and its
evaluation); ``_yaml`` (loading and structural checks); ``_forward`` (the forward graph);
``_reader`` (`read_network`).
"""

from ._errors import UnsupportedError
from ._functions import FUNCTIONS, METHODS
from ._hdf5 import read_arrays_hdf5
from ._layers import LAYER_TYPES
from ._network import Network
from ._reader import read_network

__all__ = [
    "FUNCTIONS",
    "LAYER_TYPES",
    "METHODS",
    "Network",
    "UnsupportedError",
    "read_arrays_hdf5",
    "read_network",
]
