import gc

from wolfeclick.cli import main

try:
    code = main()
finally:
    # Nothing is collected at exit: the interpreter's last collection walked every object the command made (the
    # simulator's replies, recordings, the model stack) for nothing, about a third of a CPU second for a one-battle
    # `record` (1.39 -> 1.06 s, docs/testing.md); atexit handlers and weakref finalizers still run.
    gc.freeze()
raise SystemExit(code)
