from opencode_nb.errors import (
    ConfigError,
    CorrectedError,
    DeniedError,
    NotFoundError,
    OpencodeNbError,
    RejectedError,
    ToolError,
)
from opencode_nb.permission import Rule


def test_a_config_error_names_file_line_and_key_first():
    err = ConfigError("opencode.yaml", line=12, key='agent.reviewer.permission.bash."rm *"',
                      hint="'maybe' is not one of allow, ask, deny")
    assert str(err) == (
        "opencode.yaml:12 agent.reviewer.permission.bash.\"rm *\": 'maybe' is not one of allow, ask, deny"
    )


def test_permission_errors_are_tool_errors_worded_for_the_model():
    assert issubclass(DeniedError, ToolError) and issubclass(RejectedError, ToolError)
    assert str(RejectedError()) == "The user rejected permission to use this specific tool call."
    corrected = CorrectedError("use the staging bucket")
    assert isinstance(corrected, RejectedError)
    assert str(corrected).endswith("with the following feedback: use the staging bucket")


def test_a_denial_shows_the_relevant_rules():
    err = DeniedError([Rule(permission="bash", pattern="rm *", action="deny")])
    assert '"pattern": "rm *"' in str(err)
    assert "prevents you from using this specific tool call" in str(err)


def test_not_found_reads_plainly_and_is_still_a_key_error():
    err = NotFoundError("permission request", "per_123")
    assert isinstance(err, KeyError) and isinstance(err, OpencodeNbError)
    assert str(err) == "permission request 'per_123' not found"


def test_config_errors_combine_into_one_listing_every_problem():
    one = ConfigError("a.yaml", line=2, key="model", hint="'x' is not a model id")
    two = ConfigError("b.yaml", line=5, key="sandbox", hint="'on' is not one of off, auto, required")
    combined = ConfigError.combine([one, two])
    assert str(combined) == ("2 problems in the configuration:\n  a.yaml:2 model: 'x' is not a model id\n"
                             "  b.yaml:5 sandbox: 'on' is not one of off, auto, required")
    assert combined.problems == [one, two] and (combined.path, combined.line) == ("a.yaml", 2)
    assert ConfigError.combine([one]) is one
    assert ConfigError.combine([combined, ConfigError(hint="three")]).problems[-1].hint == "three"


def test_a_refusal_is_worded_for_the_model_and_summed_up_for_the_person():
    assert RejectedError().summary == "Rejected by you"
    assert CorrectedError("use the staging bucket").summary == "Rejected by you: “use the staging bucket”"
    timeout = RejectedError("Nobody answered the permission request within 5 s, so the call was not made.")
    assert timeout.summary == str(timeout), "a refusal nobody typed is already worded for a person"
    assert DeniedError([Rule(permission="bash", pattern="rm *", action="deny")]).summary == (
        "Denied by your permission rule bash 'rm *': deny")
    assert ToolError("Call it again with a path.").summary is None


def test_errors_stored_before_they_had_a_summary_are_still_said_to_the_person():
    from opencode_nb.errors import person_summary

    assert person_summary(str(RejectedError())) == "Rejected by you"
    assert person_summary(str(CorrectedError("not now"))) == "Rejected by you: “not now”"
    assert person_summary(str(DeniedError([]))) == "Denied by your permission rules"
    assert person_summary("Path not found: x") is None
