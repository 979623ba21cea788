"""`comind mcp`: the ledger as a Model Context Protocol server (stdio).

`tools` holds what each tool does, its input and output schemas (pydantic models) and the text it
renders, with no SDK import; `server` wires them into the SDK's low-level server. Trust: whatever
an agent writes here is T1 and labelled (provenance `author_kind: agent`, `source: mcp`), and an
agent's confirmation is recorded as its review, never as a person's.
"""
