"""Implicit randomness (``jaxpmac.randomized``): keyless draws staged as a primitive, the flat
table of a function's equations, and their evaluation with explicit states, as Hail's IR pass
does. Builds on ``_samplers``, ``_message`` and ``_interop._jaxpr_readers``.
"""
