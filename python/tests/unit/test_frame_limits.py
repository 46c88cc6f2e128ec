"""One frame-size range for every command (issue 38): the generator's (nicbench_wire's builder),
the ConnectX simulator's, the PVP model's, the flow-host model's and the specs' all agree, so a size
one command accepts another does not refuse."""

from nicbench import traffic_bounds
from nicbench.experiments.targets import get_target
from nicbench.options import flowhost, pvp


def test_every_model_takes_the_generators_frame_range():
    expected = (traffic_bounds.MIN_FRAME_BYTES, traffic_bounds.MAX_FRAME_BYTES)
    assert (pvp.MIN_FRAME_BYTES, pvp.MAX_FRAME_BYTES) == expected
    assert (flowhost.MIN_FRAME_BYTES, flowhost.MAX_FRAME_BYTES) == expected
    for name in ("gen.rate", "synthetic.loss"):
        size = next(p for p in get_target(name).params if p.name == "size")
        assert (size.minimum, size.maximum) == expected, name
