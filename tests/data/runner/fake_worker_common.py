# Shared by the fake workers of tst_runnerprotocol: speaks just enough of the runner protocol.
import json
import sys


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def hello(version=1):
    send({"type": "hello", "protocol": "shardscope-runner", "version": version,
          "backend": "torch", "device": "cpu", "device_name": "fake", "python": sys.executable,
          "python_version": "3", "torch": "fake", "world_size": 1, "total_memory": 0,
          "free_memory": 0})


def requests():
    out = []
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "end":
            break
        out.append(msg)
    return out


def result(req, time_s=0.001):
    k = req["kernel"]
    send({"type": "result", "id": req["id"], "name": k["name"], "status": "ok",
          "time_s": time_s, "repeats": 3, "flops_per_s": (k.get("flops") or 1.0) / time_s})
