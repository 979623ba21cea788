"""comind.agents: what coding agents receive before an edit and how they reach it.

`preflight` (a change or a plan against the ledger), the `<comind-ledger>` block every agent
receives (`render`), and the agent CLIs' hooks (`hooks`: one module per agent behind a registry,
the interface apart, and the hooks' cached view of the ledger).
"""
