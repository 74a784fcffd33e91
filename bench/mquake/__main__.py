"""``python -m bench.mquake``."""

import sys

from bench.mquake.cli import main

sys.exit(main())
