"""``python -m cwal``: see cwal/cli.py."""

from cwal.cli import main

raise SystemExit(main())
