"""``python -m s2sbench``: the ``s2sbench`` command line."""

import sys

from s2sbench.flows.cli import main

sys.exit(main())
