"""Every public draw: ``bits``, the unit-interval primitives, the samplers built on them, their
shared validation, fixed-value math and gradient rules, and the registry that lists them.

Builds on ``_message``, ``_cipher`` and ``_lowering``.
"""
