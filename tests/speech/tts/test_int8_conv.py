"""ConvInteger as im2col and MatMulInteger: the same integers, checked on a graph built here and on Kokoro-82M."""

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

from s2sbench.pipeline.speech.tts import kokoro
from s2sbench.pipeline.speech.tts.int8_conv import conv_integer_as_matmul, has_int8_dot_product

def quantized_convs(weights: list[tuple[np.ndarray, np.ndarray, dict]]) -> onnx.ModelProto:
    """x (float [1, C, L]) quantized dynamically, then each ConvInteger on it; one int32 output per convolution."""
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"])]
    initializers, outputs = [], []
    for index, (weight, zero, attributes) in enumerate(weights):
        initializers += [numpy_helper.from_array(weight, f"w{index}"), numpy_helper.from_array(zero, f"wz{index}")]
        nodes.append(helper.make_node("ConvInteger", ["xq", f"w{index}", "xz", f"wz{index}"], [f"y{index}"], **attributes))
        outputs.append(helper.make_tensor_value_info(f"y{index}", TensorProto.INT32, None))
    graph = helper.make_graph(nodes, "convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, None])],
                              outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def run(model: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


def test_every_kind_of_1d_convolution_gives_the_same_integers():
    rng = np.random.default_rng(0)
    # without VNNI or AMX, onnxruntime's uint8 x int8 product adds two products into 16 bits: weights within 64 of the
    # shift (|w - 128| <= 64) cannot overflow it, so the graph's logic is checked there too; with them, the full range
    low, high = (0, 256) if has_int8_dot_product() else (64, 192)
    u8 = lambda *shape: rng.integers(low, high, shape, dtype=np.uint8)  # noqa: E731
    convs = [
        (u8(8, 16, 3), np.array(131, np.uint8), {"pads": [1, 1]}),                         # Kokoro's usual one
        (u8(8, 16, 7), np.array(120, np.uint8), {"pads": [9, 9], "dilations": [3]}),       # dilated
        (u8(4, 16, 5), np.array(128, np.uint8), {"pads": [2, 1], "strides": [2]}),         # strided, pads unequal
        (u8(8, 16, 1), np.array(7, np.uint8), {}),                                         # pointwise, no pads
        (rng.integers(low - 128, high - 128, (6, 16, 3), dtype=np.int8), np.array(-3, np.int8),
         {"pads": [1, 1], "kernel_shape": [3]}),                                           # int8 weights
    ]
    model = quantized_convs(convs)
    rewritten = quantized_convs(convs)
    assert conv_integer_as_matmul(rewritten) == len(convs)
    assert "ConvInteger" not in {node.op_type for node in rewritten.graph.node}
    for length in (3, 4, 37, 600):  # shorter than a kernel's span too
        x = rng.normal(0.0, 3.0, (1, 16, length)).astype(np.float32)
        x[0, 0, 0] = 40.0  # a wide range: activations from 0 to 255
        for expected, got in zip(run(model, x), run(rewritten, x)):
            assert expected.shape == got.shape and np.array_equal(expected, got), length


def test_convolutions_the_rewrite_cannot_take_stay_as_they_are():
    weight = np.zeros((8, 16, 3), np.uint8)
    grouped = quantized_convs([(np.zeros((8, 4, 3), np.uint8), np.array(0, np.uint8), {"group": 4, "pads": [1, 1]})])
    same_pad = quantized_convs([(weight, np.array(0, np.uint8), {"auto_pad": "SAME_UPPER"})])
    for model in (grouped, same_pad):
        assert conv_integer_as_matmul(model) == 0
        assert [node.op_type for node in model.graph.node] == ["DynamicQuantizeLinear", "ConvInteger"]


def test_the_cpu_flags_decide_where_the_rewrite_runs(tmp_path):
    with_vnni, without = tmp_path / "vnni", tmp_path / "plain"
    with_vnni.write_text("processor : 0\nflags : fpu sse2 avx2 avx512f avx512_vnni\n")
    without.write_text("processor : 0\nflags : fpu sse2 avx2 avx512f avx512bw\n")
    assert has_int8_dot_product(with_vnni) is True  # on an x86-64 machine, as this one
    assert has_int8_dot_product(without) is False
    assert has_int8_dot_product(tmp_path / "missing") is False


def test_kokoro_says_a_japanese_question_the_same_on_both_graphs():
    files = kokoro._package_files()
    model_path = kokoro.joined_model(files.model_sha256)
    if not has_int8_dot_product():  # the rewrite could saturate here: the engine runs the graph as shipped
        assert kokoro._graph(model_path, files.model_sha256, ["CPUExecutionProvider"]) == model_path
        return
    phonemes = kokoro.japanese_phonemes("電子レンジで温めたものを食べるとき、何を使いますか？")
    from kokoro_onnx import Kokoro

    def samples(session) -> np.ndarray:
        audio, _ = Kokoro.from_session(session, str(files.voices)).create(phonemes, voice="jf_alpha", speed=1.0,
                                                                          is_phonemes=True)
        return np.asarray(audio)

    graph = kokoro._graph(model_path, files.model_sha256, ["CPUExecutionProvider"]).read_bytes()  # the ONNX cache's
    assert b"ConvInteger" not in graph and b"MatMulInteger" in graph
    original = onnxruntime.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    assert np.array_equal(samples(original), samples(kokoro._session(model_path, files.model_sha256)))
