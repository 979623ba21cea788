"""comind.agents: what coding agents receive before an edit and how they reach it.

`preflight` (a change or a plan against the ledger), the `<comind-ledger>` block every agent
receives (`render`), the hooks' cached view of the ledger (`view`), and one module per agent CLI
behind the registry (`registry`, the interface in `protocol`).
"""
