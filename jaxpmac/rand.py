"""Keyless samplers: ``jaxpmac.<sampler>`` without the state, for :func:`jaxpmac.randomized`.

Each function takes the explicit sampler's arguments after ``state`` and works only while a
``randomized`` function is traced (elsewhere: RuntimeError). ``randomized`` gives each call site
its own state; see :func:`jaxpmac.draw_sites` for the explicit equivalent of each site.

Example:
    >>> import jax.numpy as jnp, jaxpmac as jp
    >>> model = jp.randomized(lambda x: x + jp.rand.normal(x.shape))
    >>> model(jp.key(0), jnp.zeros(2)).shape
    (2,)
"""

from __future__ import annotations

import inspect
from typing import Callable

from jaxpmac._implicit._draw import draw as _draw
from jaxpmac._samplers._registry import SAMPLERS as _SAMPLERS


def _keyless(name: str, explicit: Callable) -> Callable:
    """``explicit``'s keyless twin: the same parameters after ``state``, bound as it binds
    them, drawn by :func:`jaxpmac._implicit._draw.draw`."""
    signature = inspect.signature(explicit)
    signature = signature.replace(parameters=list(signature.parameters.values())[1:])

    def keyless(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return _draw(name, **bound.arguments)

    public = (f"jaxpmac.hail.{name[len('hail_'):]}" if name.startswith("hail_")
              else f"jaxpmac.{name}")
    keyless.__name__ = keyless.__qualname__ = name
    keyless.__module__ = __name__
    keyless.__signature__ = signature
    keyless.__doc__ = f"Keyless :func:`{public}`: the same arguments, without the state."
    return keyless


# jaxpmac/__init__.py imports every sampler module before this one, so the registry is full.
__all__ = sorted(_SAMPLERS)
globals().update({name: _keyless(name, _SAMPLERS[name]) for name in __all__})
