"""``python -m vectorport``: the same as the ``vectorport`` command."""

from vectorport.cli import main

raise SystemExit(main())
