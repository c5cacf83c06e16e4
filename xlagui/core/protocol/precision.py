"""The precisions: the Keras dtype policy an arm trains under, and the facts the app needs of
each (what it computes in, which CPU instructions compute it natively). The precision lever
(`xlagui.core.protocol.levers`) is built on it; what is said of each is `xlagui.present`'s.
"""

from __future__ import annotations

from xlagui.core.protocol.identity import StrEnum


class Precision(StrEnum):
    """The Keras dtype policy of an arm (`keras.mixed_precision`; the output layer stays
    float32 under every policy)."""

    FLOAT32 = "float32"
    BF16 = "mixed_bfloat16"
    FP16 = "mixed_float16"  # with Keras' dynamic loss scaling

    @property
    def compute_dtype(self) -> str:
        """What the layers compute in under this policy (read back from the first convolution)."""
        return _COMPUTE_DTYPES[self]

    @property
    def native_cpu_flags(self) -> frozenset[str]:
        """CPU feature flags (`/proc/cpuinfo`) of which any one computes this format natively
        (empty for float32, which every CPU computes)."""
        return _NATIVE_CPU_FLAGS.get(self, frozenset())


_COMPUTE_DTYPES = {
    Precision.FLOAT32: "float32",
    Precision.BF16: "bfloat16",
    Precision.FP16: "float16",
}
# The compute dtypes, as TensorFlow names them: float32's is what the baseline computes in,
# and what the machine's layer ceiling and its older single matmul peak were measured in.
FLOAT32_DTYPE = _COMPUTE_DTYPES[Precision.FLOAT32]
COMPUTE_DTYPES = tuple(_COMPUTE_DTYPES.values())
_NATIVE_CPU_FLAGS = {
    Precision.BF16: frozenset({"avx512_bf16", "amx_bf16"}),
    Precision.FP16: frozenset({"avx512_fp16", "amx_fp16"}),
}
