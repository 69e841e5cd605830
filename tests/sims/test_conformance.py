"""The public conformance checks (sims/conformance.py): every built-in map, model and task passes them,
and a plugin broken in one way fails the check of that way, by name.

Few shapes and tiny sizes: the map checks use P = 16 scores, the models d = 4, P = 16, L = 2
(JAX compiles each new shape once per process). Test plugins are registered per test and removed after."""

from __future__ import annotations

import numpy as np
import pytest

import depthscale
from depthscale.sims.attention_registry import BUILTIN_NAMES, unregister_attention
from depthscale.sims.config import TaskConfig
from depthscale.sims.conformance import ConformanceError, ConformanceReport, check_attention, check_model, check_task
from depthscale.sims.model_registry import unregister_model
from depthscale.sims.task_registry import register_task, unregister_task
from depthscale.sims.tasks import make_batch
from depthscale.theory._choices import MODELS, TASKS

try:
    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401
except ImportError:  # the tests below skip with the reason
    jax = jnp = None  # type: ignore[assignment]
needs_jax = pytest.mark.skipif(jax is None, reason="maps and users' models run on JAX (pip install 'depthscale[jax]')")


def _outcomes(report: ConformanceReport) -> dict:
    return {c.name: c.passed for c in report.checks}


def _only_failing(report: ConformanceReport, *names: str) -> None:
    """``names`` failed and every other check passed (so each broken plugin breaks what it says)."""
    assert sorted(c.name for c in report.failed) == sorted(names), str(report)


# ------------------------------------------------------------------------------------------------
# tasks (no JAX)
@pytest.mark.parametrize("name", TASKS)
def test_every_builtin_task_passes(name):
    report = check_task(name)  # raises ConformanceError on a failure
    assert report.passed and len(report.checks) == 5


def _wrapped(change):
    """A generator that is make_batch with ``change(batch, task, dtype)`` applied."""

    def gen(task, n, rng, dtype=np.float64):
        b = make_batch(task, n, rng, dtype=dtype)
        change(b, task, dtype)
        return b

    return gen


def test_a_task_ignoring_the_dtype_fails_only_its_shape_check():
    def as_float64(b, task, dtype):
        b.target = b.target.astype(np.float64)

    report = check_task("topk", make_batch=_wrapped(as_float64), raise_on_fail=False)
    assert report.failed[0].name == "shapes and dtypes" and "target is float64" in report.failed[0].detail
    # the rest need the shapes: not run, and saying so
    assert all(c.detail.startswith("not run: needs the check 'shapes and dtypes'") for c in report.failed[1:])


def test_a_task_drawing_from_fresh_entropy_fails_determinism():
    def fresh(task, n, rng, dtype=np.float64):
        return make_batch(task, n, np.random.default_rng(), dtype=dtype)

    _only_failing(check_task("easy-fresh", make_batch=fresh, raise_on_fail=False), "deterministic")


@pytest.fixture
def user_task():
    """Register tasks under test; removed after the test."""
    names = []

    def register(name, **kwargs):
        names.append(name)
        return register_task(name, **kwargs)

    yield register
    for name in names:
        unregister_task(name)


def _fresh(cfg, n, rng):
    return make_batch(TaskConfig(task="easy-fresh", d=cfg.d, P=cfg.P, a=cfg.a, b=cfg.b, c_omega=cfg.c_omega), n, rng)


def _power(cfg):
    return float(cfg.lam @ cfg.omega)


def test_a_users_task_passes(user_task):
    user_task("fresh-again", make_batch=_fresh, second_moment=_power)
    report = check_task("fresh-again")
    assert report.passed and "label second moment" not in _outcomes(report)  # a user declares its target's only


def test_a_users_task_whose_query_ignores_the_spectrum_fails_the_target_moment_and_nothing_else(user_task):
    # a consistent batch (t = x_test, target = beta . t) whose query ignores the input spectrum:
    # E[y*^2] = sum omega (5.46), not the sum lam omega (3.34) it declares; only the moment can tell
    def isotropic_query(cfg, n, rng):
        b = _fresh(cfg, n, rng)
        b.x_test = np.einsum("bij,bj->bi", b.O, rng.standard_normal(b.x_test.shape))
        b.t = b.x_test.copy()
        b.target = np.einsum("bi,bi->b", b.beta, b.t)
        return b

    user_task("isotropic", make_batch=isotropic_query, second_moment=_power)
    report = check_task("isotropic", raise_on_fail=False)
    _only_failing(report, "target second moment")
    assert "standard errors (> 4)" in report["target second moment"].detail


def test_a_users_task_of_the_wrong_shape_fails_its_shape_check(user_task):
    def short_labels(cfg, n, rng):
        b = _fresh(cfg, n, rng)
        b.y = b.y[:, :-1]
        return b

    user_task("short", make_batch=short_labels, second_moment=_power)
    report = check_task("short", raise_on_fail=False)
    assert not report["shapes and dtypes"].passed and "y" in report["shapes and dtypes"].detail
    assert not any(_outcomes(report).values())


def test_a_topk_target_of_the_wrong_tokens_fails_structure():
    def nearest_last(b, task, dtype):
        b.sel = b.sel[:, ::-1].copy()  # the top-k, in increasing similarity

    _only_failing(check_task("topk", make_batch=_wrapped(nearest_last), raise_on_fail=False), "structure")


# ------------------------------------------------------------------------------------------------
# models
@pytest.mark.parametrize("name", MODELS)
def test_every_builtin_model_passes_on_numba(name):
    report = check_model(name)
    assert report.passed and report.name == f"{name} (numba)"
    assert "(B, L) = (5, 2)" in report["layer outputs"].detail


@pytest.mark.slow  # each compiles the engine's training blocks: about a minute on a busy CPU
@needs_jax
@pytest.mark.parametrize("name", MODELS)
def test_every_builtin_model_passes_on_jax(name):
    assert check_model(name, engine="jax").passed


@pytest.fixture
def user_model():
    """Register models under test; removed after the test."""
    names = []

    def register(name, **kwargs):
        names.append(name)
        return depthscale.register_model(name, **kwargs)

    yield register
    for name in names:
        unregister_model(name)


def _init(key, cfg, d):
    return {"G": cfg.init_scale / d**0.5 * jax.random.normal(key, (cfg.depth, d, d))}


def _bilinear(params, X, y, x_test):
    # f_l = x_test . G_l u with u = X^T y / P: linear in the labels
    u = jnp.einsum("bpi,bp->bi", X, y) / X.shape[1]
    return jnp.einsum("bi,lij,bj->bl", x_test, params["G"], u)


@needs_jax
def test_a_users_model_passes_on_jax(user_model):
    user_model("bilinear", init=_init, layer_outputs=_bilinear, linear_in_labels=True)
    report = check_model("bilinear")  # the JAX engine: a user's model runs on nothing else
    assert report.name == "bilinear (jax)" and report.passed
    assert report["query-key norms"].detail.startswith("None")


@needs_jax
def test_a_users_model_of_the_wrong_output_shape_fails_with_the_shape_expected(user_model):
    user_model("flat", init=_init, layer_outputs=lambda p, X, y, xq: _bilinear(p, X, y, xq).mean(axis=1))
    with pytest.raises(ConformanceError) as err:
        check_model("flat")
    report = err.value.report
    assert _outcomes(report)["builds"] and not report.passed
    detail = report["layer outputs"].detail
    assert "must return an array of shape (B, L) = (5, 2)" in detail and "not shape (5,)" in detail
    assert "FAIL  layer outputs" in str(err.value)  # the error's message is the report
    assert not _outcomes(report)["training run"]


# ------------------------------------------------------------------------------------------------
# attention maps
@needs_jax
@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_every_builtin_map_passes(name):
    report = check_attention(name)
    assert report.passed and "numba kernel" in _outcomes(report)
    assert ("normalised" in _outcomes(report)) == depthscale.sims.attention_registry.get_attention(name).normalised


@pytest.fixture
def user_map():
    """Register maps under test; removed after the test."""
    names = []

    def register(name, fn, **kwargs):
        names.append(name)
        return depthscale.register_attention(name, fn, **kwargs)

    yield register
    for name in names:
        unregister_attention(name)


def _softmax(z):
    return jax.nn.softmax(z, axis=-1)


@needs_jax
def test_a_map_claiming_normalised_whose_weights_sum_to_half_fails_only_that(user_map):
    user_map("half", lambda z: 0.5 * _softmax(z), normalised=True)
    report = check_attention("half", raise_on_fail=False)
    _only_failing(report, "normalised")
    assert "a row sums to 0.5 " in report["normalised"].detail
    user_map("half", lambda z: 0.5 * _softmax(z))  # the same weights, not claimed normalised: conforms
    assert check_attention("half").passed


@needs_jax
def test_a_map_of_the_wrong_shape_fails_its_shape_check(user_map):
    user_map("short", lambda z: _softmax(z)[..., :-1])
    report = check_attention("short", raise_on_fail=False)
    assert report["shape"].detail == "scores of shape (16,) gave weights of shape (15,): must be the same"
    assert not any(_outcomes(report).values())  # the rest need the shape


@needs_jax
def test_a_map_normalising_across_rows_fails_its_shape_check(user_map):
    user_map("global", lambda z: jnp.exp(z) / jnp.exp(z).sum(), normalised=True)
    report = check_attention("global", raise_on_fail=False)
    assert not report["shape"].passed and "must act along the last axis only" in report["shape"].detail


@needs_jax
def test_a_map_with_a_wrong_custom_gradient_fails_only_the_gradient(user_map):
    @jax.custom_jvp
    def wrong(z):
        return _softmax(z)

    @wrong.defjvp
    def _(primals, tangents):  # twice the true derivative
        p, dp = jax.jvp(_softmax, primals, tangents)
        return p, 2.0 * dp

    user_map("wrong-grad", wrong, normalised=True)
    report = check_attention("wrong-grad", raise_on_fail=False)
    _only_failing(report, "gradient")
    assert "autograd and central differences differ" in report["gradient"].detail


@needs_jax
def test_learnable_parameters_get_gradients_and_an_ignored_one_fails(user_map):
    user_map("temp", lambda z, log_temp: _softmax(jnp.exp(log_temp) * z), normalised=True, params={"log_temp": 0.0})
    report = check_attention("temp")
    assert report.passed and report["parameter gradients"].detail.count("log_temp") == 1
    user_map("unused", lambda z, log_temp: _softmax(z), normalised=True, params={"log_temp": 0.0})
    report = check_attention("unused", raise_on_fail=False)
    _only_failing(report, "parameter gradients")
    assert "log_temp: the weights do not depend on it" in report["parameter gradients"].detail


@needs_jax
def test_a_map_that_raises_fails_with_what_it_raised(user_map):
    def broken(z):
        raise RuntimeError("no weights today")

    user_map("raises", broken)
    report = check_attention("raises", raise_on_fail=False)
    assert report["shape"].detail == "raised RuntimeError: no weights today"


# ------------------------------------------------------------------------------------------------
# bad input and the report
@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: check_attention("softmax2"),
            r"^name='softmax2': must be one of softmax, sparsemax, .*attention map\)$",
        ),
        (
            lambda: check_model("transformer"),
            r"^name='transformer': must be one of linear, softmax.*\(a registered model\)$",
        ),
        (
            lambda: check_task("hard"),
            r"^name='hard': must be one of easy-exact, easy-fresh, topk \(a registered task\)$",
        ),
        (lambda: check_model("softmax", engine="torch"), r"^engine='torch': must be one of numba, jax$"),
        (lambda: check_task("topk", raise_on_fail="no"), r"^raise_on_fail='no': must be True or False$"),
        (lambda: check_task("topk", make_batch=3), r"^make_batch=3: must be None or a function"),
        (lambda: check_task("topk", seed=-1), r"^seed=-1: must be"),
    ],
)
def test_bad_input_is_one_line_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match) as err:
        call()
    assert "\n" not in str(err.value)


def test_a_users_model_on_numba_is_refused_before_any_check(user_model):
    user_model("numpy-only", init=lambda key, cfg, d: {"w": np.zeros(1)}, layer_outputs=lambda *a: None)
    with pytest.raises(ValueError, match=r"^engine='numba': must be jax for model='numpy-only'"):
        check_model("numpy-only", engine="numba")


def test_the_report_reads_as_text_and_html_and_finds_checks_by_name():
    report = check_task("easy-exact")
    text = str(report).splitlines()
    assert text[0] == "task 'easy-exact': 5 of 5 checks passed" and all(t.startswith("  PASS  ") for t in text[1:])
    assert report._repr_html_().count("<tr>") == 5
    with pytest.raises(KeyError, match="'nope': not a check of this report"):
        report["nope"]
