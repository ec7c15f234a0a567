# Says hello, answers one kernel, then hangs.
import time

from fake_worker_common import hello, requests, result

hello()
reqs = [r for r in requests() if r["type"] == "kernel"]
result(reqs[0])
while True:
    time.sleep(1)
