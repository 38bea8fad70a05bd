"""An MCP server for the record example (needs the mcp extra): the order system the agent reads.

    agent-invariants record ... --mcp 'python orders_server.py' -- python agent.py
"""
from typing import TypedDict

from mcp.server.mcpserver import MCPServer

app = MCPServer("orders")


class Order(TypedDict):
    order: str
    paid: float
    currency: str
    card_token: str


@app.tool(name="orders.get")
def get_order(order: str) -> Order:
    """Look an order up: what was paid, and the card it was paid with."""
    return {"order": order, "paid": 10, "currency": "EUR", "card_token": "tok_4242_live_9f8e7d"}


if __name__ == "__main__":
    app.run()
