"""Entry point: ``python -m jaxpmac`` (see ``jaxpmac._selfcheck``)."""

import sys

from jaxpmac._selfcheck import main

sys.exit(main())
