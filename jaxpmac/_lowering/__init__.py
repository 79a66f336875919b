"""Everything in jaxpmac that knows a platform: which lowering a draw gets, and the lowerings.

The samplers hand the stream elementwise maps of its words and know nothing of how it is made;
the stream (``jaxpmac._stream``) asks :func:`by_platform` for the rolled lowering on CPUs and
an elementwise one (:mod:`._elementwise`) elsewhere, decided when the program is lowered.
"""

from jaxpmac._lowering._platform import (DEFAULT_LOWERING, LOWERINGS, PLATFORM_LOWERINGS,
                                         by_platform, force_lowering, forced_lowering,
                                         jit_per_lowering)

__all__ = ["DEFAULT_LOWERING", "LOWERINGS", "PLATFORM_LOWERINGS", "by_platform",
           "force_lowering", "forced_lowering", "jit_per_lowering"]
