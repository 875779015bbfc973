"""``python -m rtcc`` is the ``rtcc`` command."""

import sys

from rtcc.cli import main

sys.exit(main())
