"""jaxpmac: reproducible, splittable, counter-based random numbers for JAX.

Every draw is a pure function of a message -- a seed (nonce), static labels and dynamic uids --
hashed with PMAC over 20-round Threefish-256, the design of the Hail genetics library, bit for
bit (see SPEC.md). Distinct messages give independent streams; the same message gives the same
numbers under ``jit``, ``vmap``, ``scan``, remat and sharding alike.
"""

from jaxpmac._bits import bits
from jaxpmac._state import RNGState, key

__version__ = "0.1.0"

__all__ = [
    "RNGState",
    "bits",
    "key",
]
