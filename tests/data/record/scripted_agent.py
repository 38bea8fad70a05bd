"""A scripted agent for the record tests: it plays the steps of a JSON script, one by one.

    python scripted_agent.py SCRIPT.json REPLIES.jsonl

Steps: {"send": message} writes one protocol line; {"raw": text} writes text as is (no newline
added); {"recv": true} reads one line from stdin and appends it to REPLIES; {"sleep": seconds};
{"stderr": text}; {"exit": code}; {"close_stdout": true}; {"kill": "SIGKILL"} (the agent kills
itself); {"ignore_term": true}; {"grandchild": seconds} starts a process that holds stdout open
for that long; {"flood": bytes} writes that many bytes with no newline; {"pid_file": path} writes
the agent's pid; {"rewrite": [path, old, new]} replaces text in a file (the agent tampering with
its trace).
"""
import json
import os
import signal
import subprocess
import sys
import time

script_path, replies_path = sys.argv[1], sys.argv[2]
with open(script_path, encoding="utf-8") as handle:
    steps = json.load(handle)
out = sys.stdout.buffer
for step in steps:
    if "send" in step:
        out.write(json.dumps(step["send"]).encode() + b"\n")
        out.flush()
    elif "raw" in step:
        out.write(step["raw"].encode("utf-8", "surrogateescape"))
        out.flush()
    elif "recv" in step:
        line = sys.stdin.readline()
        with open(replies_path, "a", encoding="utf-8") as replies:
            replies.write(line if line.endswith("\n") or not line else line + "\n")
    elif "sleep" in step:
        time.sleep(step["sleep"])
    elif "stderr" in step:
        sys.stderr.write(step["stderr"])
        sys.stderr.flush()
    elif "exit" in step:
        sys.exit(step["exit"])
    elif "close_stdout" in step:
        out.flush()
        os.close(1)
    elif "kill" in step:
        os.kill(os.getpid(), getattr(signal, step["kill"]))
    elif "ignore_term" in step:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif "grandchild" in step:
        subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({step['grandchild']})"])
    elif "flood" in step:
        block = b"x" * 65536
        left = step["flood"]
        while left > 0:
            out.write(block[:left])
            left -= len(block)
        out.flush()
    elif "rewrite" in step:
        path, old, new = step["rewrite"]
        with open(path, "rb") as handle:
            data = handle.read()
        with open(path, "r+b") as handle:   # in place: the same file, as a process left behind would
            handle.write(data.replace(old.encode(), new.encode()))
            handle.truncate()
    elif "pid_file" in step:
        with open(step["pid_file"], "w", encoding="utf-8") as pid:
            pid.write(str(os.getpid()))
