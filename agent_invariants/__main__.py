"""`python -m agent_invariants` runs the command-line tool."""
try:
    from agent_invariants.entry import main
except KeyboardInterrupt:   # Ctrl-C while starting up: no traceback, the usual exit code
    raise SystemExit(130) from None

main()
