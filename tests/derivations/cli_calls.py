"""The command line called in-process, for the tests of its subcommands."""

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
