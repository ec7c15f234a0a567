# Answers the first kernel, then dies the way a segfaulting extension would (status 139).
import os
import sys

from fake_worker_common import hello, requests, result

hello()
reqs = [r for r in requests() if r["type"] == "kernel"]
result(reqs[0])
sys.stderr.write("Fatal Python error: Segmentation fault (simulated)\n")
sys.stderr.flush()
os._exit(139)
