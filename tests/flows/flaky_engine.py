"""A real engine that fails on some texts: espeak-ng, refusing any text with the word 'boat' (a planted backend
failure for the flow tests, registered through the engine registry like a third-party engine)."""

from s2sbench.pipeline.speech.tts.base import SynthesisError, Voice, Waveform
from s2sbench.pipeline.speech.tts.espeak import EspeakEngine


class BoatRefusingEspeak(EspeakEngine):
    name = "flaky-espeak"
    calls_refused = 0

    def synthesize(self, text: str, voice: Voice, seed: int) -> Waveform:
        if "boat" in text:
            type(self).calls_refused += 1
            raise SynthesisError("planted failure: this engine refuses boats")
        return super().synthesize(text, voice, seed)
