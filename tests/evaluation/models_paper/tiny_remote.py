"""Remote code of the tiny checkpoints the tests write (copied next to their config.json, loaded by transformers with
trust_remote_code=True).

``TinyChatGLM`` stands for GLM-4-Voice's ChatGLM class (loaded through ``AutoModel``): a small Llama.

``TinyAudioLM`` has Baichuan-Audio's published interface: ``bind_processor(tokenizer,
training, relative_path)`` sets ``model.processor``, which turns prompts holding ``<start>{"path": ...}<end>`` into
``input_ids`` (one pad id per 80 ms of the named wav file) plus ``audios``, ``encoder_length``, ``bridge_length``;
``forward`` takes those and puts a projection of each 80 ms of audio at the pad positions."""

import json
import os
import wave
from types import SimpleNamespace

import numpy as np
import torch
from transformers import LlamaForCausalLM

SAMPLES_PER_TOKEN = 1280  # 80 ms at 16 kHz


class _Attributes(dict):
    __getattr__ = dict.__getitem__


class TinyProcessor:
    def __init__(self, tokenizer, config, relative_path):
        self.tokenizer, self.relative_path = tokenizer, relative_path
        self.start = tokenizer.convert_ids_to_tokens(config.audio_start_token_id)
        self.end = tokenizer.convert_ids_to_tokens(config.audio_end_token_id)

    def __call__(self, prompts):
        [prompt] = prompts
        head, _, rest = prompt.partition(self.start)
        spec, _, tail = rest.partition(self.end)
        with wave.open(os.path.join(self.relative_path, json.loads(spec)["path"]), "rb") as handle:
            pcm = np.frombuffer(handle.readframes(handle.getnframes()), dtype="<i2")
        samples = torch.from_numpy(pcm.astype(np.float32) / 32767.0)
        n = len(samples) // SAMPLES_PER_TOKEN
        ids = (self.tokenizer.encode(head + self.start, add_special_tokens=False) + [self.tokenizer.pad_token_id] * n
               + self.tokenizer.encode(self.end + tail, add_special_tokens=False))
        return SimpleNamespace(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids)),
                               audios=samples[: n * SAMPLES_PER_TOKEN][None], encoder_length=torch.tensor([n]),
                               bridge_length=torch.tensor([n]))


class TinyChatGLM(LlamaForCausalLM):
    pass


class TinyAudioLM(LlamaForCausalLM):
    def __init__(self, config):
        super().__init__(config)
        config.audio_config = _Attributes(config.audio_config)
        self.audio_proj = torch.nn.Linear(SAMPLES_PER_TOKEN, config.hidden_size)
        self.processor = None

    def bind_processor(self, tokenizer, training=False, relative_path="/"):
        self.processor = TinyProcessor(tokenizer, self.config.audio_config, relative_path)

    def forward(self, input_ids=None, audios=None, encoder_length=None, bridge_length=None, **kwargs):
        if audios is None:
            return super().forward(input_ids=input_ids, **kwargs)
        embeds = self.get_input_embeddings()(input_ids)
        frames = self.audio_proj(audios.reshape(-1, SAMPLES_PER_TOKEN).to(embeds.dtype))
        positions = input_ids[0] == self.config.pad_token_id
        embeds[0, positions] = frames[: int(positions.sum())]
        return super().forward(inputs_embeds=embeds, **kwargs)
