"""Checks of a program's use of streams: :func:`jaxpmac.check_streams`."""
