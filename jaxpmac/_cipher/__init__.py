"""The definitions of the bits, as a specification reads: 64-bit words in their three
representations (``_words``), multi-word integers (``_limbs``), Threefish-256 with its key
schedule and rounds (``_threefish``) and the counter-mode stream's index arithmetic and element
order (``_stream``). The cipher is written once, over any word representation; the forms it is
compiled in are ``jaxpmac._lowering``'s.

Nothing here imports from the rest of jaxpmac or depends on where it runs
(``tests/test_package_structure.py`` checks both); everything else builds on it.
"""
