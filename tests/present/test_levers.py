"""The words of the levers' values and of the arms made of them."""

from __future__ import annotations

from xlagui.core.protocol.arms import BASELINE, offered_arms, parse_arm
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.levers import PRECISION, XLA, registered
from xlagui.core.protocol.modes import XlaMode
from xlagui.present.levers import (
    LEVER_WORDS,
    VALUE_WORDS,
    arm_description,
    arm_label,
    arms_words,
    every_value,
    hardware_note,
    mode_words,
    shared_levers_words,
    value_words,
    xla_choices,
)


def test_every_value_of_every_lever_has_its_words() -> None:
    # A words key has its row and every row its key; a lever that brings no words (no keys)
    # reads in plain words (tests/present/test_new_lever.py). The levers shipped bring theirs.
    assert {v.words for v in every_value() if v.words} == set(VALUE_WORDS)
    assert {one.words for one in registered() if one.words} == set(LEVER_WORDS)
    assert all(v.words for one in (XLA, PRECISION) for v in one.values)
    for lever in registered():
        for value in lever.values:
            if value.part:  # what an arm made of it is called and does
                words = value_words(lever, value)
                assert words.short and words.how, value
    for mode in XlaMode:
        w = mode_words(mode)
        assert w.label and w.short and w.words and w.how and w.brief, mode


def test_the_arms_in_words() -> None:
    assert arm_label(BASELINE) == "Baseline (XLA off, float32)"
    assert arm_description(BASELINE) == "jit_compile=False, no auto-clustering, float32"
    assert [arm_label(parse_arm(n)) for n in offered_arms()] == [
        "XLA auto-clustering",
        "mixed_bfloat16",
        "mixed_float16",
        "Keras on JAX",
        "XLA jit_compile + mixed_bfloat16",
        "XLA jit_compile + mixed_float16",
        "XLA jit_compile + YNNPACK dot fusions",
    ]
    assert arm_description(parse_arm("jit+fp16")) == (
        "model.compile(jit_compile=True); keras.mixed_precision policy mixed_float16 with "
        "dynamic loss scaling, output layer float32"
    )
    assert arm_description(parse_arm("bf16")) == (
        "keras.mixed_precision policy mixed_bfloat16, output layer float32")


AMX = frozenset({"avx512f", "avx512_bf16", "amx_bf16", "amx_tile"})
OLD = frozenset({"avx2", "fma"})


def test_hardware_notes_name_the_missing_instructions() -> None:
    bf16 = parse_arm("bf16")
    assert hardware_note(bf16, "CPU", AMX) == ""
    note = hardware_note(bf16, "CPU", OLD)
    assert "no native bfloat16" in note and "AMX-BF16" in note
    assert note == ("this CPU has no native bfloat16 (AVX512-BF16 or AMX-BF16): bfloat16 is "
                    "emulated, so expect it slower; the interleaved figures show the cost")
    assert "emulated" in hardware_note(parse_arm("fp16"), "CPU", AMX)
    assert hardware_note(parse_arm("jit"), "CPU", OLD) == ""
    assert "could not read" in hardware_note(bf16, "CPU", frozenset())
    assert hardware_note(bf16, "GPU", OLD) == (
        "bfloat16 runs natively on GPUs from compute capability 8.0 (Ampere) on")
    assert hardware_note(parse_arm("fp16"), "GPU", OLD) == ""


def test_the_xla_sides_modes_offered_are_the_values_with_a_choice() -> None:
    # The settings' radio buttons, in the lever table's order: Keras' "auto" has none.
    choices = xla_choices()
    assert [mode for mode, _words in choices] == [XlaMode.JIT, XlaMode.AUTOCLUSTER]
    assert all(words.choice and words.tip for _mode, words in choices)


def test_the_arms_help_is_built_from_the_levers_word_for_word() -> None:
    # `xlagui compare --arms`'s help, as it read when it was written by hand.
    assert arms_words() == (
        "jit, autocluster, bf16 (mixed_bfloat16), fp16 (mixed_float16), jax, or one XLA mode and "
        "one precision joined with + (jit+bf16); runtime settings join any arm: tN (N intra-op "
        "threads), dnn or nodnn (oneDNN on or off), speN (Keras steps_per_execution N, N >= 2), "
        "and with an XLA mode XLA flags written name=value (jit+xla_cpu_use_xnnpack=false) or "
        "by name (noxnnpack, xladnn, dnncall, noynn, ynndot, fastmath, noeigenmt, vec512, "
        "memsched)")


def test_a_comparisons_levers_for_every_worker_in_a_line() -> None:
    config = RunConfig(levers={"onednn": "off", "threads": "1", "precision": "bf16"})
    assert shared_levers_words(config.levers) == (
        "every worker: mixed_bfloat16, threads=1, oneDNN off")
    assert shared_levers_words({}) == ""


def test_several_xla_flags_read_in_the_words_of_each() -> None:
    arm = parse_arm("jit+xladnn+dnncall")
    assert arm_label(arm) == "XLA jit_compile + oneDNN custom calls + XLA oneDNN"
    assert arm_description(arm).count("XLA_FLAGS=") == 2
    free = parse_arm("jit+xla_cpu_prefer_vector_width=128+fastmath")
    assert arm_label(free) == (
        "XLA jit_compile + fast math + xla_flags=--xla_cpu_prefer_vector_width=128")
