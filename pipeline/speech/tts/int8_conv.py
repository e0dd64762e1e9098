"""A dynamically quantized model's 1-D ``ConvInteger`` rewritten as im2col and ``MatMulInteger``: the same integers,
on onnxruntime's int8 matrix product.

onnxruntime runs ``ConvInteger`` through a generic path: in Kokoro-82M's int8 graph its 87 convolutions took 60% of
a clip's CPU, while the same products as ``MatMulInteger`` (uint8 activations times int8 weights) run on the
processor's int8 dot-product instructions (VNNI, AMX). Each convolution becomes: the activations turned time-major,
padded with their zero point, the kernel's taps sliced and concatenated (im2col), one ``MatMulInteger`` with the
weights stored as int8 (``w - 128`` and its zero point ``- 128``: the differences, and so the products, unchanged),
and the result turned back to channels-first. Integer products are exact, so the model gives the same samples bit
for bit (``tests/speech/tts/test_int8_conv.py``; ``python bench/kokoro_graphs.py BUILD`` times both graphs).

Where the processor has no int8 dot product, onnxruntime's uint8 x int8 product can saturate (``VPMADDUBSW`` adds
two products into 16 bits), so :func:`has_int8_dot_product` keeps the graph as it is there.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REWRITE_VERSION = "conv-as-matmul-v2"  # part of the cached graph's name: change it when the rewrite changes
INT8_DOT_PRODUCT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})


def has_int8_dot_product(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this x86-64 processor multiplies uint8 by int8 without an intermediate 16-bit sum (VNNI or AMX)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool(INT8_DOT_PRODUCT_FLAGS & set(line.partition(":")[2].split()))
    return False


def conv_integer_as_matmul(model) -> int:
    """Rewrite, in place, every ``ConvInteger`` of ``model`` (an ``onnx.ModelProto``) that is a 1-D convolution with
    constant uint8 or int8 weights, one group and explicit pads; returns how many were rewritten. Others stay as they
    are. The rewritten graph takes a batch of one (Kokoro synthesizes one window at a time): another batch size fails
    in its Squeeze, loudly."""
    from onnx import helper, numpy_helper

    if not any(opset.domain in ("", "ai.onnx") and opset.version >= 13 for opset in model.opset_import):
        return 0  # the rewrite writes opset-13 Squeeze, Unsqueeze and Slice
    graph = model.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    added: list = []
    nodes: list = []

    def constant(name: str, value: np.ndarray) -> str:
        added.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    first_axis = constant("int8_conv/axis0", np.array([0], np.int64))
    rewritten = 0
    for node in graph.node:
        plan = _conv_plan(node, initializers)
        if plan is None:
            nodes.append(node)
            continue
        rewritten += 1
        name = f"int8_conv/{rewritten}"
        x_zero = plan.x_zero or constant(f"{name}/x_zero", np.array(0, np.uint8))
        outputs, channels, kernel = plan.weights.shape
        # [K*C, O], row k*C + c: tap k of input channel c, matching the concatenated slices below
        b = constant(f"{name}/weights", plan.weights.transpose(2, 1, 0).reshape(kernel * channels, outputs))
        b_zero = constant(f"{name}/weights_zero", plan.weight_zero)
        nodes.append(helper.make_node("Squeeze", [plan.x, first_axis], [f"{name}/x"]))
        nodes.append(helper.make_node("Transpose", [f"{name}/x"], [f"{name}/time_major"], perm=[1, 0]))
        source = f"{name}/time_major"
        if any(plan.pads):
            pads = constant(f"{name}/pads", np.array([plan.pads[0], 0, plan.pads[1], 0], np.int64))
            nodes.append(helper.make_node("Pad", [source, pads, x_zero], [f"{name}/padded"], mode="constant"))
            source = f"{name}/padded"
        # tap k reads frames k*d, k*d + s, ... up to (padded length - d*(K-1)) frames on: every output frame once
        nodes.append(helper.make_node("Shape", [source], [f"{name}/length"], start=0, end=1))
        span = constant(f"{name}/span", np.array([plan.dilation * (kernel - 1)], np.int64))
        nodes.append(helper.make_node("Sub", [f"{name}/length", span], [f"{name}/reach"]))
        step = [constant(f"{name}/step", np.array([plan.stride], np.int64))] if plan.stride != 1 else []
        slices = []
        for tap in range(kernel):
            start = constant(f"{name}/start{tap}", np.array([tap * plan.dilation], np.int64))
            nodes.append(helper.make_node("Add", [f"{name}/reach", start], [f"{name}/end{tap}"]))
            inputs = [source, start, f"{name}/end{tap}", first_axis, *step]
            nodes.append(helper.make_node("Slice", inputs, [f"{name}/tap{tap}"]))
            slices.append(f"{name}/tap{tap}")
        nodes.append(helper.make_node("Concat", slices, [f"{name}/columns"], axis=1))
        nodes.append(helper.make_node("MatMulInteger", [f"{name}/columns", b, x_zero, b_zero], [f"{name}/product"]))
        nodes.append(helper.make_node("Transpose", [f"{name}/product"], [f"{name}/channels"], perm=[1, 0]))
        nodes.append(helper.make_node("Unsqueeze", [f"{name}/channels", first_axis], [node.output[0]]))
    if not rewritten:
        return 0
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    return rewritten


@dataclass(frozen=True)
class _Conv1d:
    """What the rewrite needs of a ConvInteger: its int8 weights [O, C, K] and their zero point (a scalar or one per
    output channel), its input and the input's zero point (None: 0), and its geometry."""

    weights: np.ndarray
    weight_zero: np.ndarray
    x: str
    x_zero: str | None
    dilation: int
    stride: int
    pads: tuple[int, int]


def _conv_plan(node, initializers: dict) -> _Conv1d | None:
    """What the rewrite needs of ``node``, or None when it is not a convolution the rewrite handles."""
    from onnx import helper, numpy_helper

    if node.op_type != "ConvInteger" or node.domain not in ("", "ai.onnx"):
        return None
    inputs = list(node.input) + [""] * (4 - len(node.input))
    x, w, x_zero, w_zero = inputs
    if w not in initializers or (w_zero and w_zero not in initializers):
        return None
    attributes = {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}
    weights = numpy_helper.to_array(initializers[w])
    auto_pad = attributes.get("auto_pad", b"NOTSET")
    if weights.ndim != 3 or attributes.get("group", 1) != 1 or auto_pad not in (b"NOTSET", "NOTSET"):
        return None
    zero = numpy_helper.to_array(initializers[w_zero]) if w_zero else np.zeros((), weights.dtype)
    if zero.size not in (1, weights.shape[0]):
        return None
    if weights.dtype == np.uint8:  # shifted into int8: w - z is unchanged, and uint8 x int8 is the fast product
        weights, zero = _shift_to_int8(weights), _shift_to_int8(zero)
    elif weights.dtype != np.int8:
        return None
    if "kernel_shape" in attributes and list(attributes["kernel_shape"]) != [weights.shape[2]]:
        return None
    pads = attributes.get("pads", [0, 0])
    return _Conv1d(weights=weights, weight_zero=zero.reshape(-1) if zero.size > 1 else zero.reshape(()), x=x,
                   x_zero=x_zero or None, dilation=attributes.get("dilations", [1])[0],
                   stride=attributes.get("strides", [1])[0], pads=(pads[0], pads[1]))


def _shift_to_int8(values: np.ndarray) -> np.ndarray:
    return (values.astype(np.int16) - 128).astype(np.int8)


def rewritten_model_bytes(model_path: Path) -> bytes:
    """``model_path``'s graph with its convolutions rewritten, serialized (for :func:`onnx_cache.derived_file`)."""
    import onnx

    model = onnx.load(str(model_path))
    conv_integer_as_matmul(model)
    return model.SerializeToString()
