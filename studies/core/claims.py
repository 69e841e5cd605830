"""The core study's claims, in report order: the theory checks (:mod:`.theory_checks`), linear
attention (:mod:`.linear`), softmax attention (:mod:`.softmax`) and the controls (:mod:`.controls`)."""

from __future__ import annotations

from . import controls, linear, softmax, theory_checks

CLAIMS = (
    *theory_checks.CLAIMS,
    *linear.CLAIMS,
    *softmax.CLAIMS[:4],
    controls.identity,
    *softmax.CLAIMS[4:],
    *controls.CLAIMS[1:],
)
