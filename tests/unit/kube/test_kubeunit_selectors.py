"""Label and field selector grammar of the emulator."""

from __future__ import annotations

import pytest

from sim.kube.selectors import FieldSelector, LabelSelector, SelectorError, field_value


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "db"}, False),
        ("app!=web", {}, True),
        ("app in (web, db)", {"app": "db"}, True),
        ("app notin (web,db)", {"app": "db"}, False),
        ("app notin (web)", {}, True),
        ("app", {"app": ""}, True),
        ("!app", {"app": "x"}, False),
        ("app=web,tier in (front),!canary", {"app": "web", "tier": "front"}, True),
        ("karpenter.sh/nodepool=general-purpose", {"karpenter.sh/nodepool": "general-purpose"}, True),
        ("", {"anything": "x"}, True),
    ],
)
def test_label_selector(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert LabelSelector.parse(selector).matches(labels) is expected


def test_label_selector_rejects_garbage() -> None:
    with pytest.raises(SelectorError):
        LabelSelector.parse("app in (")


def test_match_expressions_selector() -> None:
    sel = LabelSelector.from_match({"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]})
    assert sel.matches({"app": "x", "tier": "web"}) and not sel.matches({"app": "x", "tier": "db"})


def test_field_selector_paths() -> None:
    event = {"involvedObject": {"kind": "Pod", "name": "p"}, "source": {"component": "default-scheduler"}, "spec": {"unschedulable": True}}
    assert FieldSelector.parse("involvedObject.kind=Pod,involvedObject.name==p").matches(event)
    assert not FieldSelector.parse("involvedObject.name!=p").matches(event)
    assert FieldSelector.parse("spec.nodeName=").matches(event)
    assert field_value(event, "spec.unschedulable") == "true"
