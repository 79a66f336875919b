"""Hail's random functions over a state's output blocks, bit for bit (the engine behind
``jaxpmac.hail``). Builds on ``_samplers``, ``_message`` and ``_cipher``.
"""
