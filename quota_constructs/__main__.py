"""``python -m quota_constructs``: the ``quota-constructs`` console script."""

import sys

from .cli import main

sys.exit(main())
