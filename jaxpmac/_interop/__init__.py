"""jaxpmac streams as typed ``jax.random`` keys; the one module that meets JAX's internals
(``_jax_internals``); readers of the jaxpr equations whose parameters differ across jax versions
(``_jaxpr_readers``). Builds on ``_samplers``, ``_message``, ``_cipher`` and ``_lowering``.
"""
