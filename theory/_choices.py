"""The allowed values of every named choice, kept once and imported by the library and the CLI alike.

Project infrastructure, like :mod:`depthscale.theory._validate` (which checks a value against one of
these with ``check_choice``): private to the project, imported by every layer, exported by none.
Each tuple lists its values in the order help texts and error messages show them.

>>> set(EASY_TASKS) < set(TASKS) and set(LINEAR_OPTIMUM_TASKS) == set(EASY_TASKS)
True
"""

from __future__ import annotations

TASKS = ("easy-exact", "easy-fresh", "topk")  # what a model is trained on (sims/tasks.py)
EASY_TASKS = ("easy-exact", "easy-fresh")  # the tasks whose target is the plain linear read-out
LINEAR_OPTIMUM_TASKS = ("easy-fresh", "easy-exact")  # tasks the best depth-L polynomial is computed for
MODELS = ("linear", "softmax")  # attention models
SCHEDULES = ("constant", "cosine", "plateau")  # learning-rate schedules
# reference floors of a softmax task (docs/reference-floors.md), stored with each run on it
FLOOR_NAMES = ("single", "convex", "mixture")
CLT_MODELS = ("iid", "equicorrelated", "ar1", "powerlaw")  # layer-error correlation models (theory/clt.py)
FORMATS = ("md", "html", "tex")  # rendered formats of a report or a derivation
# attention nonlinearities of the base softmax-family layer (sims/attention_maps.py implements them)
ATTENTIONS = ("softmax", "sparsemax", "entmax15", "sigmoid", "relu")
