"""Entry point: ``python -m jaxpmac`` (see ``jaxpmac._selfcheck._check``)."""

import sys

from jaxpmac._selfcheck._check import main

sys.exit(main())
