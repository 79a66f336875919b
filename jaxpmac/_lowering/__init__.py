"""Everything in jaxpmac that knows a platform: which lowering a draw gets, and the lowerings.

The samplers hand the stream elementwise maps of its words and know nothing of how it is made;
a window of the stream (:mod:`._window`) asks :func:`by_platform` for the rolled lowering on
CPUs (:mod:`._chunks`, and :mod:`._stream_lanes` under ``vmap``) and an elementwise one
(:mod:`._elementwise`) elsewhere, decided when the program is lowered; a message's traced
blocks are encrypted the same way (:mod:`._encrypt`, which also computes one named form of the
cipher for callers that pick it). The cipher as a loop over rounds, the CPU's form, is
:mod:`._rolled`. The cipher and the stream themselves, the same on every platform, are
``jaxpmac._cipher``.
"""

from jaxpmac._lowering._platform import (DEFAULT_LOWERING, FORCIBLE_LOWERINGS, KERNEL_LOWERING,
                                         LOWERINGS, PLATFORM_LOWERINGS, by_platform,
                                         cpu_barrier, force_lowering, forced_lowering,
                                         in_kernel)

__all__ = ["DEFAULT_LOWERING", "FORCIBLE_LOWERINGS", "KERNEL_LOWERING", "LOWERINGS",
           "PLATFORM_LOWERINGS", "by_platform", "cpu_barrier", "force_lowering",
           "forced_lowering", "in_kernel"]
