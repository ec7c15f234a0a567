#!/bin/sh
# A Python that cannot import torch, for tst_torchworker: Debian's /usr/bin/python3 with -I -S,
# so that neither dist-packages (where python3-torch is) nor PYTHONPATH nor the user's site is on
# sys.path; the standard library the worker needs still is. The arguments go to Python as given.
exec /usr/bin/python3 -I -S "$@"
