"""`python -m supervisor` runs the command-line interface."""

from supervisor.cli import main

raise SystemExit(main())
