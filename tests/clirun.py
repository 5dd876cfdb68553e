"""Running the CLI in tests, and the shape every user error must have: one line on stderr, non-zero exit."""

from typer.testing import CliRunner

from tokenmath.cli.app import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_line_error(r, *needles):
    assert r.exit_code != 0
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in r.output
    for n in needles:
        assert n in err, err
