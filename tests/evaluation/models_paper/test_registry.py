"""Every family of the paper is registered, resolves to code, and declares the modes its adapter scores."""

from __future__ import annotations

import importlib

import pytest

from s2sbench.evaluation.models import UNVERIFIED, list_adapters

# registry name -> the adapter class its target builds
FAMILIES = {
    "moshi": "moshi:MoshiAdapter",
    "unit-lm": "unit_lm:UnitLMAdapter",
    "glm-4-voice": "glm4_voice:GLM4VoiceAdapter",
    "baichuan-audio": "baichuan_audio:BaichuanAudioAdapter",
    "spirit-lm": "spirit_lm:SpiritLMAdapter",
    "freeze-omni": "freeze_omni:FreezeOmniAdapter",
}


def _resolve(target: str):
    module, attribute = target.rsplit(":", 1)
    if not module.startswith("s2sbench."):
        module = "s2sbench.evaluation.models." + module
    return getattr(importlib.import_module(module), attribute)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_is_listed_with_its_modes_and_status(name):
    info = {info.name: info for info in list_adapters()}[name]
    assert callable(_resolve(info.target))
    adapter_class = _resolve(FAMILIES[name])
    assert set(info.modes) == set(adapter_class.modes)
    assert adapter_class.name == name
    # none of these has scored its real weights here: the docs give the command that verifies each
    assert info.status == UNVERIFIED and info.hub_ids
