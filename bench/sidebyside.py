"""Two benchmark sides started at once, so the shared machine's load hits both alike.

Each side is this same script run again as `SCRIPT BINARY --side KIND DIRECTORY`: it prints
`ready`, waits for `go` on stdin, runs, and prints one JSON line of figures. Which side is
started and told to go first alternates between rounds: an A/A run (the same side twice)
showed the second one about 5% slower.
"""
import json
import subprocess
import sys


def round_side_by_side(script, binary, directory, kinds, timeout):
    """The figures of both sides, in the order of `kinds`; `kinds` reversed starts the second
    side first and still returns the figures in `kinds` order."""
    sides = [subprocess.Popen([sys.executable, script, binary, "--side", kind, directory],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for kind in kinds]
    for side in sides:
        if side.stdout.readline().strip() != "ready":
            raise SystemExit("a side failed to start")
    for side in sides:
        side.stdin.write("go\n")
        side.stdin.flush()
    results = [json.loads(side.stdout.readline()) for side in sides]
    for side in sides:
        side.wait(timeout=timeout)
    return dict(zip(kinds, results))
