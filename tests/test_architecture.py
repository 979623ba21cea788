"""Dependencies point one way: cli -> bot -> checks -> harvest -> core; only the store writes objects."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["comind.harvest", "comind.checks", "comind.agents", "comind.bot", "comind.eval", "comind.cli"]  # lowest first


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("comind", include_external_packages=True, cache_dir=None)


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_import_linter_layers_contract() -> None:
    # In a subprocess: import-linter reconfigures logging, which would silence other tests' caplog.
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}))",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_core_imports_no_upper_layer(graph: grimp.ImportGraph) -> None:
    core = [m for m in graph.modules if _in(m, "comind") and not any(_in(m, layer) for layer in LAYERS)]
    assert "comind.records" in core and "comind.store" in core
    offenders = [
        (m, imported)
        for m in core
        for imported in graph.find_modules_directly_imported_by(m)
        if any(_in(imported, layer) for layer in LAYERS)
    ]
    assert offenders == []


def test_each_layer_imports_only_downwards(graph: grimp.ImportGraph) -> None:
    offenders = []
    for level, layer in enumerate(LAYERS):
        higher = LAYERS[level + 1 :]
        for module in (m for m in graph.modules if _in(m, layer)):
            offenders += [
                (module, i) for i in graph.find_modules_directly_imported_by(module) if any(_in(i, h) for h in higher)
            ]
    assert offenders == []


def test_only_the_store_module_touches_object_stores(graph: grimp.ImportGraph) -> None:
    importers = {m for m in graph.find_modules_that_directly_import("obstore")}
    for sub in (m for m in graph.modules if _in(m, "obstore")):
        importers |= graph.find_modules_that_directly_import(sub)
    assert {m for m in importers if _in(m, "comind")} == {"comind.store"}
