"""The effective configuration, value by value: what is in force, defaults included, and where each came from."""

from opencode_nb.config.explain import Setting, explain


def test_written_values_name_their_file_and_line_and_the_rest_are_defaults(project):
    path = project.write("repo/opencode.yaml", "model: openai/gpt-5\nprovider:\n  openai:\n"
                                               "    api_key: '{env:TEAM_KEY}'\nagent:\n  build:\n    steps: 5\n")
    settings = {s.path: s for s in explain(project.load(TEAM_KEY="sk-1"))}
    assert settings[("model",)] == Setting(("model",), "openai/gpt-5", f"{path}:1")
    assert settings[("provider", "openai", "api_key")].source == f"{path}:4, from $TEAM_KEY"
    assert settings[("agent", "build", "steps")] == Setting(("agent", "build", "steps"), 5, f"{path}:7")
    assert settings[("sandbox",)] == Setting(("sandbox",), "auto", "default")
    assert settings[("compaction", "auto")].source == "default"
    assert ("agent", "build", "temperature") not in settings, "an agent's unwritten fields are the agent's own"


def test_an_unset_key_shows_what_applies_instead(project):
    settings = {s.path: s for s in explain(project.load(), fallbacks={"model": ("anthropic/x", "built in")})}
    assert settings[("model",)] == Setting(("model",), "anthropic/x", "default (built in)")
    assert settings[("small_model",)] == Setting(("small_model",), None, "default")


def test_the_nearest_file_is_named_for_a_key_two_files_set(project):
    project.write("xdg/opencode_nb/opencode.yaml", "sandbox: off\n")
    near = project.write("repo/opencode.yaml", "\nsandbox: required\n")
    assert {s.path: s for s in explain(project.load())}[("sandbox",)].source == f"{near}:2"
