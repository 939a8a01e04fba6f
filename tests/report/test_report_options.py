"""Every option of ``embdiag report`` is declared once (:class:`ReportOptions`); each place that
reads or writes options (the command line, the GitHub Action, the report chapter, report.json and
its schema, ``embdiag verify``) has exactly the options the declaration gives it, and a value set
in one place arrives unchanged in the next."""

from __future__ import annotations

import ast
import doctest
import inspect
import json
from dataclasses import replace

import yaml

from embdiag.paper import pipeline
from embdiag.paper.pipeline import REPO
from embdiag.report import action, cli, measure, options
from embdiag.report import verify as V
from embdiag.report.options import OPTIONS, ReportOptions, file_options, in_action

ON_COMMAND_LINE = [o for o in OPTIONS if o.flag is not None]

#: Valid specs other than the default ''.
SPECS = {"compress": "fp16,int8", "index": "hnsw"}


def _other(option):
    """A value of ``option`` other than its default."""
    default = getattr(ReportOptions(), option.name)
    if option.kind == "spec":
        return SPECS[option.name]
    if option.kind in ("int", "number"):
        return default + 2 if option.kind == "int" else default / 2
    if option.kind == "file" and option.many:
        return (f"{option.name}.npy", f"{option.name}_2.npy")
    return {
        "file": f"{option.name}.npy",
        "switch": not default,
        "rules": ("overlap@12<0.9", "delta_p@12<-1"),
        "address": "local:2",
        "folder": "out dir",
    }[option.kind]


def _others(options) -> ReportOptions:
    return ReportOptions(**{o.name: _other(o) for o in options})


def test_every_option_has_a_default_differing_from_its_test_value():
    for o in OPTIONS:
        assert getattr(ReportOptions(), o.name) != _other(o), o.name


def test_the_command_line_has_every_declared_option_and_no_other():
    actions = [a for a in cli.build_parser()._actions if a.dest != "help"]
    assert [a.dest for a in actions] == [o.name for o in ON_COMMAND_LINE]
    assert {s for a in actions for s in a.option_strings} | {"VECTORS"} == {o.flag for o in ON_COMMAND_LINE}


def test_a_value_of_every_option_survives_the_command_line():
    given = _others(ON_COMMAND_LINE)
    parsed = ReportOptions.from_namespace(cli.build_parser().parse_args(given.command_line()))
    assert parsed == given


def test_the_action_has_an_input_for_every_option_but_those_it_says_why_not():
    declared = yaml.safe_load((REPO / "action.yml").read_text())
    step = next(s for s in declared["runs"]["steps"] if s.get("name") == "embdiag report")
    assert declared["inputs"] == action.inputs() and step["env"] == action.environment()
    offered = {o.input for o in in_action()}
    assert set(declared["inputs"]) - set(action.OWN_INPUTS) == offered and "qrels" in offered
    for o in OPTIONS:
        assert (o.action is None) == bool(o.not_in_action), o.name


def test_a_value_of_every_action_input_reaches_the_command():
    given = _others(in_action())
    env = {}
    for o in in_action():
        value = getattr(given, o.name)
        env[o.env] = "\n".join(value) if o.many else "true" if o.kind == "switch" else str(value)
    parsed = ReportOptions.from_namespace(cli.build_parser().parse_args(action.arguments(env)))
    assert parsed == given


def test_the_report_page_takes_every_option_it_is_given_and_measures_with_it():
    declared = pipeline.parameters(cli.CHAPTER.stem)
    args = cli.build_parser().parse_args(_others(ON_COMMAND_LINE).command_line())
    given = ReportOptions.from_namespace(args).parameters()
    assert {o.parameter for o in OPTIONS if o.parameter} == set(given) and set(given) <= set(declared)
    calls = {
        node.func.id: node
        for node in ast.walk(ast.parse(cli.CHAPTER.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    read = {kw.arg: ast.unparse(kw.value) for kw in calls["chapter_inputs"].keywords}
    read[file_options()[0].parameter] = ast.unparse(calls["chapter_inputs"].args[0])  # VECTORS: positional
    measured = {kw.arg: ast.unparse(kw.value) for kw in calls["measure"].keywords if kw.arg}
    for o in OPTIONS:
        if o.parameter is not None:
            passed = read.get(o.parameter) if o.kind == "file" else measured.get(o.name)
            assert passed == o.parameter, f"the page passes {passed} for {o.name}"


def test_report_json_and_its_schema_record_what_the_declaration_says(tmp_path, write_user_files):
    files = write_user_files(tmp_path, 300, 12)
    paths = {"VECTORS": files / "vectors.npy", "--labels": files / "labels.csv", "--pairs": files / "pairs.csv"}
    given = replace(
        ReportOptions(**{o.name: _other(o) for o in OPTIONS if o.recorded in ("inputs", "options")}),
        index="",
        quick=False,
        stress=False,
        **{o.name: str(paths[o.flag]) for o in file_options() if o.flag in paths},
    )
    measure(**cli.read_inputs(**given.inputs()), **given.measure_arguments(), progress=False).save(tmp_path / "r")
    inputs = json.loads((tmp_path / "r" / "report.json").read_text())["inputs"]
    assert set(inputs["options"]) == {o.key for o in OPTIONS if o.recorded == "options"}
    assert {o.key for o in OPTIONS if o.recorded == "inputs"} <= set(inputs)
    assert ReportOptions.from_report(inputs, paths) == given  # what embdiag verify measures again with

    schema = json.loads(V.SCHEMA_FILE.read_text())["properties"]["inputs"]
    assert set(schema["properties"]["options"]["properties"]) == set(inputs["options"])
    assert set(schema["properties"]["options"]["required"]) == set(inputs["options"])
    assert {o.key for o in OPTIONS if o.recorded == "inputs"} <= set(schema["required"])
    names = schema["properties"]["files"]["propertyNames"]["anyOf"]
    assert names[0]["enum"] == [o.flag for o in file_options() if o.recorded == "files" and not o.many]
    assert [f"^{o.flag} .+$" for o in file_options() if o.many] == [n["pattern"] for n in names[1:-1]]


def test_the_docstring_examples_of_the_declaration_and_the_action_hold():
    for module in (options, action):
        results = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, report=False)
        assert results.attempted > 0 and results.failed == 0, module.__name__


def test_measure_defaults_to_the_declared_defaults():
    signature = inspect.signature(measure).parameters
    for name, value in ReportOptions().measure_arguments().items():
        option = next(o for o in OPTIONS if o.name == name)
        assert option.to_json(signature[name].default) == option.to_json(value), name


def test_a_file_option_given_more_than_once_holds_a_tuple_even_of_one_path():
    assert ReportOptions(vectors="v.npy", compare="b.npy").compare == ("b.npy",)
    assert ReportOptions(vectors="v.npy", compare=["b.npy", "c.npy"]).files() == {
        "VECTORS": "v.npy",
        "--compare b": "b.npy",
        "--compare c": "c.npy",
    }
    assert ReportOptions(vectors="v.npy").compare == ()
