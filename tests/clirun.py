"""Shared test helpers: running the CLI, the shape every user error must have (one line on stderr, non-zero
exit), and the frontier-5t model record."""

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


def frontier():
    """The catalog's frontier-5t (≈100B active, 2 KB KV at FP8), or an equivalent record if it is absent."""
    from tokenmath.core.load import CatalogError, load_model
    from tokenmath.core.records import Model, MoE

    try:
        return load_model("frontier-5t")
    except CatalogError:
        return Model(name="frontier-5t", file="test", n_layers=48, d_model=16384, n_heads=128, n_kv_heads=8,
                     head_dim=128, n_kv_layers=1, d_ff=2048, vocab_size=262144,
                     moe=MoE(n_routed_experts=1024, experts_per_token=12, n_shared_experts=1, d_ff_expert=2048),
                     weight_dtype="fp8", kv_dtype="fp8")
