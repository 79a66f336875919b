"""Keyless samplers: ``jaxpmac.<sampler>`` without the state, for :func:`jaxpmac.randomized`.

Each function takes the explicit sampler's arguments after ``state`` and works only while a
``randomized`` function is traced (elsewhere: RuntimeError). ``randomized`` gives each call site
its own state; see :func:`jaxpmac.draw_sites` for the explicit equivalent of each site. A site
numbered by its place in the program moves when draws are added before it; a keyword-only
``name=`` pins it instead, as Hail's ``seed=`` does: ``rand.normal(shape, name="dropout1")``
draws from ``state.split_static("jaxpmac.rand.name", "dropout1")`` (then its vmap lanes and
loop indices, as every site), whatever other draws the function makes; two draws of one name
are an error. Inside ``with keyed_by(example_id):`` draws are keyed by the uid instead of the
lanes and loop indices it varies over (:func:`keyed_by`).

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
from jaxpmac._implicit._draw import keyed_by
from jaxpmac._samplers._registry import SAMPLERS as _SAMPLERS


def _keyless(sampler: str, explicit: Callable) -> Callable:
    """``explicit``'s keyless twin: the same parameters after ``state``, bound as it binds
    them, and a keyword-only ``name``, drawn by :func:`jaxpmac._implicit._draw.draw`."""
    signature = inspect.signature(explicit)
    parameters = list(signature.parameters.values())[1:]
    sampler_signature = signature.replace(parameters=parameters)
    signature = signature.replace(parameters=[*parameters, inspect.Parameter(
        "name", inspect.Parameter.KEYWORD_ONLY, default=None)])

    def keyless(*args, name=None, **kwargs):
        bound = sampler_signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return _draw(sampler, name, **bound.arguments)

    public = (f"jaxpmac.hail.{sampler[len('hail_'):]}" if sampler.startswith("hail_")
              else f"jaxpmac.{sampler}")
    keyless.__name__ = keyless.__qualname__ = sampler
    keyless.__module__ = __name__
    keyless.__signature__ = signature
    keyless.__doc__ = (f"Keyless :func:`{public}`: the same arguments, without the state; "
                       "``name=`` pins the draw's site (module docstring).")
    return keyless


# jaxpmac/__init__.py imports every sampler module before this one, so the registry is full.
__all__ = sorted([*_SAMPLERS, "keyed_by"])
globals().update({name: _keyless(name, _SAMPLERS[name]) for name in _SAMPLERS})
