"""The settings advised on, without a window: each field's note, the arms' hardware notes, the
line on the data left out."""

from __future__ import annotations

import dataclasses

from xlagui.core.protocol.config import DEFAULTS, EXTRA_ARM_BUDGET_SECONDS, ModelChoice, XlaMode
from xlagui.present.settings_advice import (
    Note,
    SettingsDraft,
    arm_note,
    left_out_line,
    settings_notes,
)

PLAIN = SettingsDraft(epochs=3, batch_size=32, image_size=150, repeats=1, device="cpu",
                      xla_mode=XlaMode.JIT, arms=(), check=False, model=ModelChoice())


def notes(**changes: object) -> dict[str, Note]:
    return settings_notes(dataclasses.replace(PLAIN, **changes))  # type: ignore[arg-type]


def test_settings_without_remarks_have_no_notes() -> None:
    assert notes() == {}


def test_an_image_too_small_for_the_model_is_an_error_in_the_cores_words() -> None:
    assert notes(image_size=8)["image_size"] == Note(
        "error", "Image size 8 is too small: the article's CNN has three unpadded 5x5 "
        "convolutions each followed by 2x2 pooling, so the smallest image it accepts is 36x36.")
    assert notes(image_size=48)["image_size"] == Note(
        "info", "Small images train fast but leave XLA little to speed up (the smallest is "
        "36 px).")
    assert "image_size" not in notes(image_size=64)


def test_the_batch_is_checked_against_the_training_set_once_there_is_one() -> None:
    assert "batch_size" not in notes(batch_size=64)  # no dataset yet
    assert notes(batch_size=64, train_count=10)["batch_size"] == Note(
        "error", "Batch size 64 is larger than the training set (10 images): choose a batch "
        "size of at most 10.")
    assert notes(batch_size=32, train_count=1000)["batch_size"] == Note(
        "info", "1,000 training images: 31 full batches per epoch, 8 left out of each "
        "shuffled epoch.")
    assert notes(batch_size=10, train_count=10)["batch_size"].text == (
        "10 training images: 1 full batch per epoch.")
    assert notes(train_count=0)["batch_size"].severity == "error"  # no image to train on


def test_one_epoch_many_repeats_and_a_test_folder_are_explained() -> None:
    advice = notes(epochs=1, repeats=3, auto_split=False)
    assert advice["epochs"] == Note(
        "warning", "With one epoch there is no steady epoch to compare: the first epoch "
        "includes tracing and compiling. Use 2 or more.")
    assert advice["repeats"] == Note(
        "info", "3 runs per side, interleaved (baseline, XLA, …); the speed-up interval comes "
        "from the repeats.")
    assert advice["holdout_percent"] == Note(
        "info", "Not used: the dataset has its own test folder.")


def test_the_budget_that_follows_the_arms_says_what_it_adds_up() -> None:
    text = notes(arms=("bf16", "jit"), check=True)["budget_seconds"].text
    assert text == (
        f"{DEFAULTS['budget_seconds']} s for XLA and {EXTRA_ARM_BUDGET_SECONDS} s more for "
        "each other arm (bf16, the A/A check's twin): each needs pairs of its own.")
    assert "budget_seconds" not in notes(arms=("jit",))  # the XLA side itself: no other arm
    assert "budget_seconds" not in notes(arms=("bf16",), budget_chosen=True)


def test_a_gpu_left_unused_is_pointed_out() -> None:
    assert notes(gpu_available=True)["device"] == Note(
        "info", "A GPU is available; XLA usually gains more there.")
    assert "device" not in notes(gpu_available=True, device="gpu:0")


def test_arm_notes_follow_the_hardware() -> None:
    assert arm_note("fp16", "CPU").startswith("TensorFlow has few native float16 kernels on ")
    assert arm_note("fp16", "CPU").endswith("expect it much slower.")
    assert arm_note("bf16", "GPU") == (
        "Bfloat16 runs natively on GPUs from compute capability 8.0 (Ampere) on.")
    assert arm_note("fp16", "GPU") == "" and arm_note("autocluster", "CPU") == ""


def test_the_left_out_line() -> None:
    assert left_out_line(1, "") == (
        "1 file left out of this comparison. The dataset folder is not changed.")
    assert left_out_line(1200, "3 duplicates") == (
        "1,200 files left out of this comparison (3 duplicates). The dataset folder is not "
        "changed.")
