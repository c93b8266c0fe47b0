"""CPU seconds (utime + stime) of a process and every process under it, counting those already
ended (a recycled sandbox worker) through their parents' cutime + cstime, so the sum only
grows. Usage: python3 tree_cpu.py PID"""
import os
import sys

root = int(sys.argv[1])
tick = os.sysconf("SC_CLK_TCK")
kids = {}
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            kids.setdefault(int(f[1]), []).append((int(p), sum(int(x) for x in f[11:15])))
        except OSError:
            pass
own = open(f"/proc/{root}/stat").read().rsplit(")", 1)[1].split()
total, todo = sum(int(x) for x in own[11:15]), [root]
while todo:
    for child, ticks in kids.get(todo.pop(), []):
        total += ticks
        todo.append(child)
print(total / tick)
