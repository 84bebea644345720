"""A broken configuration file is said in every `%agent` cell until it is fixed, in a real kernel.

A mistake that is only a wrong value keeps the configuration read before in force (and says so); a mistake in
something that restricts (a misspelt `permission:`, `deny`, or tool name) blocks prompts until it is fixed,
because the configuration read before would allow what the file meant to take away.
"""

from __future__ import annotations

import yaml

HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}


def test_every_cell_says_the_file_is_broken_and_which_configuration_is_in_force_until_it_is_fixed(kernel, tmp_path):
    fe = kernel([{"text": "First."}, {"text": "Second."}, {"text": "Third."}], render_views=False, env=HEADLESS)
    fe.run("%agent hello")
    config = tmp_path / "project" / "opencode.yaml"
    good = config.read_text()
    config.write_text(good + "agent:\n  build:\n    steps: -3\n")
    first = fe.execute("%agent again")
    assert fe.done(first)["content"]["status"] == "ok" and "Second." in fe.text(first)
    assert "agent.build.steps: -3" in fe.text(first), "the first cell after the change says every problem"
    for cell in ("%agent sessions", "%agent once more"):
        msg = fe.execute(cell)
        assert fe.done(msg)["content"]["status"] == "ok"
        text = fe.text(msg)
        assert "opencode.yaml:" in text and "is broken" in text and "read before" in text, text
    config.write_text(good)
    fixed = fe.execute("%agent sessions")
    assert fe.done(fixed)["content"]["status"] == "ok"
    assert "Configuration read again" in fe.text(fixed) and "is broken" not in fe.text(fixed)


def test_a_misspelt_restriction_blocks_prompts_but_not_the_subcommands_that_help_fix_it(kernel, tmp_path):
    fe = kernel([{"text": "Ran."}], render_views=False, env=HEADLESS)  # a new reading replays the script anew
    fe.run("%agent hello")
    config = tmp_path / "project" / "opencode.yaml"
    good = config.read_text()
    mistakes = ({"permission": {"bash": {"*": "deni"}}}, {"agent": {"build": {"permisions": {"bash": "deny"}}}},
                {"permission": {"bassh": "deny"}})
    for broken in mistakes:
        config.write_text(yaml.safe_dump({**yaml.safe_load(good), **broken}))
        for _ in range(2):  # the first cell after the change, and every later one
            msg = fe.execute("%agent run a command")
            reply = fe.done(msg)
            assert reply["content"]["status"] == "error", broken
            said = reply["content"]["evalue"] + fe.text(msg)
            assert "opencode.yaml:" in said and "blocked" in said, said
            assert fe.text(msg).count("did you mean") == 1, f"the mistake is said once, by the refusal: {said}"
        help_cell = fe.execute("%agent config")
        assert fe.done(help_cell)["content"]["status"] == "ok"
        assert "blocked" in fe.text(help_cell)
    config.write_text(good)
    fixed = fe.execute("%agent go on")
    assert fe.done(fixed)["content"]["status"] == "ok"
    assert "Configuration read again" in fe.text(fixed) and "Ran." in fe.text(fixed)
