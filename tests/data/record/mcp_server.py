"""A real MCP server (the official SDK's) for the record tests: a quick tool, a slow one, one that
fails, and, started with --changed, a schema that changed; with --huge, a tool answering
megabytes; with --defaults, one whose schema holds a default value; with --rpc-error, one answering
a JSON-RPC error; with --token T, one whose description repeats T; with --spawn FILE, it starts a
process of its own that would sleep for a minute, and writes its pid to FILE; with --start-delay
SECONDS, it waits that long before it serves."""
import subprocess
import sys
import time

from mcp.server.mcpserver import MCPServer

app = MCPServer("record-test-tools")

if "--changed" in sys.argv:
    @app.tool()
    def lookup(order: str, verbose: bool = False) -> dict:
        """Look an order up."""
        return {"order": order, "paid": 10}
else:
    @app.tool()
    def lookup(order: str) -> dict:
        """Look an order up."""
        return {"order": order, "paid": 10}


if "--huge" in sys.argv:
    @app.tool()
    def huge(megabytes: float) -> str:
        """Answer with this many megabytes of text."""
        return "x" * int(megabytes * 1_000_000)


if "--defaults" in sys.argv:
    @app.tool()
    def shaped(kind: dict = {"type": ["first", "second"]}) -> str:  # noqa: B006 (never changed)
        """A tool whose schema holds a default value, an object with a `type` array (data)."""
        return str(kind)


if "--token" in sys.argv:
    def greet() -> str:
        return "hello"
    greet.__doc__ = f"Greets; authenticated with {sys.argv[sys.argv.index('--token') + 1]}."
    app.tool()(greet)


if "--rpc-error" in sys.argv:
    @app.tool()
    def refuse(times: int) -> str:
        """Answer the first call with a JSON-RPC error of code -32000, as servers do for their own errors."""
        if times == 1:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32000, message="bad params")
        return "fine"


@app.tool()
def slow(seconds: float) -> str:
    """Answer after a while."""
    time.sleep(seconds)
    return "finally"


@app.tool()
def broken() -> str:
    """Always fails."""
    raise ValueError("the ledger is down")


if __name__ == "__main__":
    if "--spawn" in sys.argv:
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open(sys.argv[sys.argv.index("--spawn") + 1], "w", encoding="utf-8") as pid_file:
            pid_file.write(str(sleeper.pid))
    if "--start-delay" in sys.argv:
        time.sleep(float(sys.argv[sys.argv.index("--start-delay") + 1]))
    app.run()
