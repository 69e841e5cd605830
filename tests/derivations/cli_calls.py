"""The command line called in-process, for the tests of its subcommands."""

import sys
import types

from depthscale.derivations.cli.app import main


def run(capsys, argv):
    """Exit code, stdout and stderr of ``depthscale ARGV``."""
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def with_option(argv, flag, value):
    """A copy of ``argv`` with ``flag`` set to ``value``: its value replaced, or the pair appended."""
    argv = list(argv)
    if flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [flag, value]
    return argv


def option_name(flag):
    """The parameter an option sets, as error messages name it: ``--c-omega`` -> ``c_omega``."""
    return flag[2:].replace("-", "_")


def given(argv):
    """The ``--name value`` pairs of ``argv`` whose value is a number, as ``{name: float(value)}``."""
    out = {}
    for flag, value in zip(argv, argv[1:]):
        if flag.startswith("--"):
            try:
                out[option_name(flag)] = float(value)
            except ValueError:
                pass
    return out


def rejection(capsys, argv, flag, value):
    """The error line of ``depthscale ARGV`` with ``flag`` set to ``value``, which must exit 2 and print
    nothing to stdout and one line to stderr (the caller checks that the line names the parameter)."""
    code, out, err = run(capsys, with_option(argv, flag, value))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    return err


def forbid(monkeypatch, module, function):
    """Stand in for ``module`` with one whose ``function`` fails the test when called: input the command
    rejects must be rejected before any work."""

    def must_not_run(*args, **kw):  # pragma: no cover - reaching it is the failure
        raise AssertionError(f"{function} called with invalid input")

    monkeypatch.setitem(sys.modules, module, types.SimpleNamespace(**{function: must_not_run}))
