"""Write `gpu-hand-made.xplane.pb`: a hand-made XSpace (no GPU was at hand to record one), built
with TensorFlow's own protobuf classes in the shape TF 2.21's profiler gives:

- `/host:CPU`: two step windows (`train`, 0–10 ms and 10–20 ms) on the python thread; an XLA:CPU
  thunk `convolution.4` at 1–2 ms with its `end: convolution.4` at 5 ms (asynchronous: in flight
  1–5 ms) and a synchronous `fusion.2` at 6–7 ms (its `end:` at once);
- `/device:GPU:0`, line `Stream #7(Compute)`: four kernels: one with a processed `tf_op` stat
  (the forward conv, 11–13 ms), one with only CUPTI's raw `annotation` of a TensorFlow op (the
  conv's input gradient, 13–16 ms), one whose annotation stack is XLA's
  (`module:#program_id=3#::Thunk:#hlo_op=fusion.7,hlo_module=jit_step#`, 16–17 ms), one with
  processed `hlo_op`/`hlo_module` stats (17–18 ms);
- a `tf_data_private_threadpool` line on the host with an augmentation op (left out).

    PYTHONPATH=$PWD python tests/helpers/recorded/profiles/make_gpu.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MS = 1_000_000_000  # ps
CONV_FWD = "StatefulPartitionedCall/net_1/conv2d_1/Relu:Conv2D"
CONV_IN = ("StatefulPartitionedCall/gradient_tape/net_1/conv2d_1/convolution/"
           "Conv2DBackpropInput:Conv2DBackpropInput")


class PlaneWriter:
    def __init__(self, plane: Any) -> None:
        self.plane = plane
        self.events: dict[str, int] = {}
        self.stats: dict[str, int] = {}

    def event_id(self, name: str) -> int:
        if name not in self.events:
            i = len(self.events) + 1
            self.events[name] = i
            self.plane.event_metadata[i].id = i
            self.plane.event_metadata[i].name = name
        return self.events[name]

    def stat_id(self, name: str) -> int:
        if name not in self.stats:
            i = len(self.stats) + 1
            self.stats[name] = i
            self.plane.stat_metadata[i].id = i
            self.plane.stat_metadata[i].name = name
        return self.stats[name]

    def line(self, line_id: int, name: str) -> Any:
        line = self.plane.lines.add()
        line.id, line.name, line.display_name, line.timestamp_ns = line_id, name, name, 1000
        return line

    def event(self, line: Any, name: str, start_ms: float, dur_ms: float, **stats: Any) -> None:
        e = line.events.add()
        e.metadata_id = self.event_id(name)
        e.offset_ps, e.duration_ps = int(start_ms * MS), int(dur_ms * MS)
        for key, value in stats.items():
            s = e.stats.add()
            s.metadata_id = self.stat_id(key)
            if isinstance(value, int):
                s.int64_value = value
            else:
                s.str_value = value


def main() -> None:
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    host = PlaneWriter(space.planes.add())
    host.plane.id, host.plane.name = 1, "/host:CPU"
    python = host.line(1, "python")
    host.event(python, "train", 0, 10, step_num=0)
    host.event(python, "train", 10, 10, step_num=1)
    eigen = host.line(2, "tf_numa_-1_Eigen/1")
    host.event(eigen, "convolution.4", 1, 1, hlo_op="convolution.4", hlo_module="jit_step")
    host.event(eigen, "end: convolution.4", 4.99, 0.01)
    host.event(eigen, "fusion.2", 6, 1, hlo_op="fusion.2", hlo_module="jit_step")
    host.event(eigen, "end: fusion.2", 6.99, 0.01)
    data = host.line(3, "tf_data_private_threadpool/1")
    host.event(data, "augmentation_1/random_zoom_1_1/ImageProjectiveTransformV3:"
                     "ImageProjectiveTransformV3", 0, 20)
    gpu = PlaneWriter(space.planes.add())
    gpu.plane.id, gpu.plane.name = 2, "/device:GPU:0"
    stream = gpu.line(7, "Stream #7(Compute)")
    gpu.event(stream, "sm90_xmma_fprop_implicit_gemm", 11, 2, tf_op=CONV_FWD, correlation_id=1)
    gpu.event(stream, "sm90_xmma_dgrad_implicit_gemm", 13, 3, annotation=CONV_IN)
    gpu.event(stream, "loop_add_fusion", 16, 1,
              annotation="jit_step:#program_id=3#::Thunk:#hlo_op=fusion.7,hlo_module=jit_step#")
    gpu.event(stream, "cutlass_gemm", 17, 1, hlo_op="dot.3", hlo_module="jit_step")
    (HERE / "gpu-hand-made.xplane.pb").write_bytes(space.SerializeToString())


if __name__ == "__main__":
    main()
