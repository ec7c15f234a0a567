# Never says hello.
import time

time.sleep(60)
