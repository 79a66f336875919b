"""The PMAC message: user input validated into message words, and :class:`RNGState`, which
folds what is known at trace time and keeps only traced words as pytree leaves.

Builds on ``_cipher`` and, to encrypt traced blocks, on ``_lowering``.
"""
