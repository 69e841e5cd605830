"""The ``depthscale`` command line: the entry point (app.py) and one module per sub-command (commands/).

Public names are re-exported lazily: ``from depthscale.derivations.cli import X`` imports only the
module that defines ``X`` (standard library only, so start-up stays fast).
"""

from depthscale.theory._exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__, app="COMMANDS build_parser check_out_dir check_out_file emit main parse_list to_json version"
)
