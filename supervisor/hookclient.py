"""`python -m supervisor.hookclient TARGET ...`: the hook command written by earlier installers.

Settings files installed before the hook platform (`supervisor.hooks`) run this module; it is
the client (`supervisor.hooks.client`) under its old name, so those entries keep working until
`supervisor install` rewrites them.
"""

import sys

from supervisor.hooks.client import main

if __name__ == "__main__":
    sys.exit(main())
