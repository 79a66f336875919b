"""jaxpmac streams as typed ``jax.random`` keys, and the one module that meets JAX's internals
(``_jax_compat``). Builds on ``_samplers``, ``_message``, ``_cipher`` and ``_lowering``.
"""
