"""Seeded noise for VITS voices exported to ONNX (Piper): the graph's random ops become a counter-based generator.

A VITS voice draws Gaussian noise twice per sentence (stochastic durations and the prior), inside the ONNX graph,
with ``RandomNormalLike``. onnxruntime cannot seed those per call: their generator is created with the session and
advances with every run, so the same text comes out different each time and depends on what ran before. This
module rewrites each ``RandomNormalLike`` into integer hashing of (element index, node, a per-call offset fed as a
new graph input) followed by a Box-Muller transform: the same seed gives the same noise, in any call order, and a
different seed a different rendition, which is what a verification retry wants.

The hash is a few rounds of squaring and multiplying modulo the prime 2^31 - 1 on int64 (exact, no overflow);
:func:`reference_noise` is the same computation in numpy, for tests.
"""

from __future__ import annotations

import math

import numpy as np

NOISE_INPUT = "noise_offset"
NOISE_VERSION = "counter-hash-v1"  # part of the model version: change it when the generator changes
_PRIME = 2147483647
_MULTIPLIER = 1103515245
_ROUNDS = (12345, 67891, 24680)
_MIXER = 48271
_STREAMS = 4  # per element: 2 uniforms for each of up to 2 noise nodes (more nodes wrap, offset by node index)


def _mix(x: np.ndarray, offset: int | np.ndarray) -> np.ndarray:
    x = (x * _MULTIPLIER + offset) % _PRIME
    for constant in _ROUNDS:
        x = (x * x + constant) % _PRIME
        x = (x * _MIXER) % _PRIME
    return x


def call_offset(seed: int, call: int) -> int:
    """The generator offset of one model call (``call``: the sentence index within a clip)."""
    return int(_mix(np.array([abs(seed) * 65537 + call + (1 << 30 if seed < 0 else 0)], dtype=np.int64), 0)[0])


def reference_noise(size: int, node: int, offset: int) -> np.ndarray:
    """What the rewritten node ``node`` outputs (flattened) for ``size`` elements: standard normal, float32."""
    index = np.arange(1, size + 1, dtype=np.int64) * _STREAMS + 2 * node
    first = (_mix(index, offset).astype(np.float32) + np.float32(0.5)) / np.float32(_PRIME)
    second = (_mix(index + 1, offset).astype(np.float32) + np.float32(0.5)) / np.float32(_PRIME)
    return (np.sqrt(np.log(first) * np.float32(-2.0)) * np.cos(second * np.float32(2 * math.pi))).astype(np.float32)


def seed_random_nodes(model) -> int:
    """Rewrite every ``RandomNormalLike`` of an ``onnx.ModelProto`` in place; returns how many were rewritten.

    The model gains an int64 input ``noise_offset`` of shape [1] (see :func:`call_offset`).
    """
    from onnx import TensorProto, helper

    graph = model.graph
    nodes = list(graph.node)
    targets = [node for node in nodes if node.op_type == "RandomNormalLike"]
    if not targets:
        return 0

    def const(name: str, value, dtype=TensorProto.INT64, dims=()) -> str:
        graph.initializer.append(helper.make_tensor(name, dtype, dims, [value] if not dims else value))
        return name

    prefix = "/seeded_noise"
    prime, multiplier, mixer = const(f"{prefix}/prime", _PRIME), const(f"{prefix}/mul", _MULTIPLIER), const(f"{prefix}/mix", _MIXER)
    streams, one = const(f"{prefix}/streams", _STREAMS), const(f"{prefix}/one", 1)
    flat_shape, axis = const(f"{prefix}/flat", [-1], dims=(1,)), const(f"{prefix}/axis", 0)
    rounds = [const(f"{prefix}/round{i}", value) for i, value in enumerate(_ROUNDS)]
    half = const(f"{prefix}/half", 0.5, TensorProto.FLOAT)
    prime_f = const(f"{prefix}/prime_f", float(_PRIME), TensorProto.FLOAT)
    minus_two = const(f"{prefix}/minus_two", -2.0, TensorProto.FLOAT)
    two_pi = const(f"{prefix}/two_pi", 2 * math.pi, TensorProto.FLOAT)
    graph.input.append(helper.make_tensor_value_info(NOISE_INPUT, TensorProto.INT64, [1]))

    replaced = {}
    for number, target in enumerate(targets):
        p = f"{prefix}/{number}"
        new: list = []

        def op(kind: str, inputs: list[str], name: str, **attrs) -> str:
            new.append(helper.make_node(kind, inputs, [f"{p}/{name}"], name=f"{p}/{name}", **attrs))
            return f"{p}/{name}"

        def mix(x: str, tag: str) -> str:
            x = op("Mod", [op("Add", [op("Mul", [x, multiplier], f"{tag}_m"), NOISE_INPUT], f"{tag}_a"), prime], f"{tag}_0")
            for i, constant in enumerate(rounds):
                square = op("Add", [op("Mul", [x, x], f"{tag}_sq{i}"), constant], f"{tag}_sqc{i}")
                x = op("Mod", [op("Mul", [op("Mod", [square, prime], f"{tag}_r{i}"), mixer], f"{tag}_x{i}"), prime], f"{tag}_y{i}")
            return op("Div", [op("Add", [op("Cast", [x], f"{tag}_f", to=TensorProto.FLOAT), half], f"{tag}_h"), prime_f], f"{tag}_u")

        shape = op("Shape", [target.input[0]], "shape")
        ones = op("ConstantOfShape", [shape], "ones", value=helper.make_tensor("one", TensorProto.INT64, [1], [1]))
        index = op("CumSum", [op("Reshape", [ones, flat_shape], "flat"), axis], "index")
        node_offset = const(f"{p}/node", 2 * number)
        base = op("Add", [op("Mul", [index, streams], "scaled"), node_offset], "base")
        first, second = mix(base, "a"), mix(op("Add", [base, one], "base1"), "b")
        radius = op("Sqrt", [op("Mul", [op("Log", [first], "log"), minus_two], "m2log")], "radius")
        normal = op("Mul", [radius, op("Cos", [op("Mul", [second, two_pi], "angle")], "cos")], "normal")
        attributes = {attr.name: helper.get_attribute_value(attr) for attr in target.attribute}
        if attributes.get("dtype", TensorProto.FLOAT) != TensorProto.FLOAT:
            raise ValueError(f"{target.name}: only float32 RandomNormalLike can be seeded (dtype {attributes['dtype']})")
        if attributes.get("scale", 1.0) != 1.0:
            normal = op("Mul", [normal, const(f"{p}/scale", float(attributes["scale"]), TensorProto.FLOAT)], "scaled_normal")
        if attributes.get("mean", 0.0) != 0.0:
            normal = op("Add", [normal, const(f"{p}/mean", float(attributes["mean"]), TensorProto.FLOAT)], "shifted")
        new.append(helper.make_node("Reshape", [normal, shape], [target.output[0]], name=f"{p}/out"))
        replaced[id(target)] = new

    graph.ClearField("node")
    for node in nodes:
        graph.node.extend(replaced.get(id(node), [node]))
    return len(targets)
