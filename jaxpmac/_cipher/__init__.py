"""The definitions of the bits, on no platform in particular: 64-bit words in their three
representations, multi-word integers, Threefish-256 and the counter-mode stream.

Nothing here imports from the rest of jaxpmac; everything else builds on it.
"""
