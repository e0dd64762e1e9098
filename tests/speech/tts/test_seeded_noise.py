import numpy as np
import pytest

from s2sbench.pipeline.speech.tts.seeded_noise import NOISE_INPUT, call_offset, reference_noise, seed_random_nodes


@pytest.fixture(scope="module")
def session():
    """A two-node graph shaped like a VITS export: noise like an input of any shape, one node with scale and mean."""
    import onnxruntime
    from onnx import TensorProto, checker, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b"])
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["a", "b"]) for name in ("y", "z")]
    graph = helper.make_graph([
        helper.make_node("RandomNormalLike", ["x"], ["y"], dtype=1),
        helper.make_node("RandomNormalLike", ["x"], ["z"], scale=2.0, mean=1.0),
    ], "noise", [x], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    assert seed_random_nodes(model) == 2
    checker.check_model(model)
    return onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def run(session, seed: int, shape=(192, 300)):
    return session.run(None, {"x": np.zeros(shape, np.float32), NOISE_INPUT: np.array([call_offset(seed, 0)], np.int64)})


def test_rewritten_graph_matches_the_reference_and_repeats(session):
    y, z = run(session, 5)
    np.testing.assert_allclose(y.ravel(), reference_noise(y.size, 0, call_offset(5, 0)), atol=1e-5)
    np.testing.assert_allclose(z.ravel(), 1.0 + 2.0 * reference_noise(z.size, 1, call_offset(5, 0)), atol=1e-5)
    again, _ = run(session, 5)
    assert np.array_equal(y, again)  # no state carried between runs, unlike onnxruntime's own generator


def test_noise_is_standard_normal_and_independent_across_seeds_nodes_and_neighbours(session):
    y, z = run(session, 1)
    other, _ = run(session, 2)
    flat = y.ravel()
    bound = 5 / np.sqrt(flat.size)  # five standard errors
    assert abs(flat.mean()) < bound and abs(flat.std() - 1) < 0.01
    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < bound
    assert abs(np.corrcoef(flat, other.ravel())[0, 1]) < bound
    assert abs(np.corrcoef(flat, (z.ravel() - 1) / 2)[0, 1]) < bound
    assert np.quantile(flat, 0.975) == pytest.approx(1.96, abs=0.05)


def test_offsets_differ_per_seed_and_call():
    offsets = {call_offset(seed, call) for seed in range(-3, 50) for call in range(4)}
    assert len(offsets) == 53 * 4
