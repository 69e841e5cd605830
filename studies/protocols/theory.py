"""The protocol study's theory numbers: the reference floors of its curves' tasks, paired with their
runs (:func:`theory_numbers`), computed once per report; its claims and those of any study that
reads protocol rows find them there (``protocol_floors`` of the authoring API)."""

from __future__ import annotations

from depthscale.derivations.study import ProtocolFloors, TheoryInputs, gather_protocol_floors, protocol_curves

NAME = "protocols"  # the study's name: its numbers are TheoryNumbers.studies[NAME]


def theory_numbers(inputs: TheoryInputs) -> ProtocolFloors:
    """The reference floors of the protocol curves paired with their runs (empty without the runs' arrays)."""
    if inputs.load_arrays is None or not protocol_curves(inputs.curves):
        return ProtocolFloors()
    return gather_protocol_floors(inputs.curves, inputs.load_arrays)


__all__ = ["NAME", "theory_numbers"]
