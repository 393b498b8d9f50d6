"""importer/objects.py: a rendered object's field of another shape than Kubernetes gives it reads as absent."""

from __future__ import annotations

from generator.importer.objects import items, maps, section


def test_a_list_field_is_read_and_any_other_shape_is_empty() -> None:
    container = {"command": ["llama-server", "--port", 8080], "args": "--ctx-size 4096", "ports": {"a": 1}}
    assert items(container, "command") == ["llama-server", "--port", 8080]
    assert items(container, "args") == []  # a string is not split into characters
    assert items(container, "ports") == []  # a mapping's keys are not items
    assert items(container, "env") == []


def test_maps_keeps_the_mappings_of_a_list() -> None:
    container = {"volumeMounts": [{"name": "models", "mountPath": "/models"}, "stray", None, {"name": "cache"}]}
    assert maps(container, "volumeMounts") == [{"name": "models", "mountPath": "/models"}, {"name": "cache"}]


def test_section_is_a_mapping_or_empty() -> None:
    container = {"startupProbe": {"httpGet": {"path": "/health"}}, "livenessProbe": "yes", "resources": None}
    assert section(section(container, "startupProbe"), "httpGet") == {"path": "/health"}
    assert section(container, "livenessProbe") == {}
    assert section(container, "resources") == {}
