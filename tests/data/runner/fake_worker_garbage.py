# Says hello, answers one kernel, then babbles on the protocol channel.
from fake_worker_common import hello, requests, result
import sys

hello()
reqs = [r for r in requests() if r["type"] == "kernel"]
result(reqs[0])
sys.stdout.write("Warning: this is not a protocol line\n")
sys.stdout.flush()
