"""The public samplers, registered where each is defined: the one list of them.

:func:`sampler` marks a public draw function: it ends the draw (``ends_draw``: on a CPU, an
``optimization_barrier``), marks it for :func:`jaxpmac.check_streams` while one traces
(``_stream_marks``) and records it under its public name in :data:`SAMPLERS`, from which
the keyless functions of ``jaxpmac.rand`` and the implicit pass's table of explicit samplers
are made. Adding a sampler is: decorate it, export it from ``jaxpmac/__init__.py`` and
write its keyless twin into ``jaxpmac/rand.py`` (``python tests/test_rand_names.py``).
"""

from __future__ import annotations

import functools
from typing import Callable

from jaxpmac._lowering._draw_boundary import ends_draw
from jaxpmac._samplers import _stream_marks

#: Public name (``jaxpmac.<name>``; ``hail_<name>`` for ``jaxpmac.hail.<name>``) -> the explicit
#: sampler, whose first argument is the state.
SAMPLERS: dict[str, Callable] = {}


def sampler(draw: Callable | None = None, *, prefix: str = ""):
    """Registers ``draw`` as the public sampler ``prefix + draw.__name__`` and ends its draw.

    Example:
        >>> from jaxpmac._samplers import _registry
        >>> _registry.SAMPLERS["normal"].__name__
        'normal'
    """
    def register(draw: Callable) -> Callable:
        name = prefix + draw.__name__
        if name in SAMPLERS and SAMPLERS[name].__module__ != draw.__module__:
            raise ValueError(f"two samplers are registered as {name!r}")
        ended = functools.wraps(draw)(_stream_marks.marked(name, ends_draw(draw)))
        SAMPLERS[name] = ended
        return ended

    return register if draw is None else register(draw)
