# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith ...` — the headless command line."""
import sys

from .cli import main

sys.exit(main())
