"""`python -m agent_invariants` runs the command-line tool."""
from agent_invariants.cli import main

main()
