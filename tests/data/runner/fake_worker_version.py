# Speaks a future version of the protocol.
from fake_worker_common import hello

hello(version=99)
