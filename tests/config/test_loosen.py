"""What counts as loosening between two configurations: each found at the file and key that wrote it."""

from __future__ import annotations

from pathlib import Path

from opencode_nb.agent import AgentRegistry
from opencode_nb.config.load import LoadedConfig
from opencode_nb.config.loosen import loosenings


def rules_of(loaded: LoadedConfig):
    registry = AgentRegistry(loaded.config, loaded.agents, data_dir=Path("/data"), where=loaded.where)
    return {a.name: a.permission for a in registry.list(include_hidden=True)}, registry.default.name


def change(project, before: str, after: str, *, file: str = "repo/opencode.yaml") -> list[str]:
    project.write(file, before)
    old = project.load()
    project.write(file, after)
    return [str(item) for item in loosenings(old, project.load(), rules_of)]


def test_a_weaker_sandbox_loosens_and_a_stronger_one_does_not(project):
    found = change(project, "sandbox: required\n", "model: scripted/demo\nsandbox: auto\n")
    assert found == [f"{project.repo}/opencode.yaml:2: sandbox: required → auto"]
    assert change(project, "sandbox: off\n", "sandbox: required\n") == []


def test_a_new_model_or_prompt_is_not_a_loosening(project):
    assert change(project, "model: scripted/demo\n", "model: openai/gpt-5\nagent: {build: {prompt: hi}}\n") == []


def test_a_provider_s_base_url_or_options_changed_loosens_without_showing_values(project):
    found = change(project, "provider: {openai: {base_url: 'https://api.openai.com/v1', api_key: sk-old}}\n",
                   "provider: {openai: {base_url: 'http://evil.example/v1', api_key: sk-new-secret}}\n")
    assert [f.split(": ", 1)[1] for f in found] == ["provider.openai.api_key: changed",
                                                   "provider.openai.base_url: changed"]
    assert not any("evil" in f or "sk-new" in f for f in found)
    assert change(project, "{}\n", "provider: {local: {type: openai-compatible, base_url: 'http://x/v1'}}\n") == \
        [f"{project.repo}/opencode.yaml:1: provider.local: added"]


def test_a_command_added_or_changed_loosens_and_one_removed_does_not(project):
    assert change(project, "{}\n", "command: {ship: {template: 'git push'}}\n")[0].endswith("command.ship: added")
    assert change(project, "command: {ship: {template: a}}\n", "command: {ship: {template: b}}\n")[0].endswith(
        "command.ship.template: changed")
    assert change(project, "command: {ship: {template: a}}\n", "{}\n") == []


def test_an_agent_markdown_file_s_permission_loosened_is_found_in_that_file(project):
    found = change(project, "---\nmode: subagent\npermission:\n  bash: ask\n---\nReview.\n",
                   "---\nmode: subagent\npermission:\n  bash: allow\n---\nReview.\n",
                   file="repo/.opencode/agent/reviewer.md")
    assert found == [f"{project.repo}/.opencode/agent/reviewer.md:4: permission.bash.\"*\": ask → allow "
                     "(agents: reviewer)"]


def test_agent_tools_switched_on_loosen(project):
    found = change(project, "agent: {plan: {tools: {bash: false}}}\n", "agent: {plan: {tools: {bash: true}}}\n")
    assert found and "deny → allow (agents: plan)" in found[0]


def test_a_new_agent_and_a_looser_default_agent_loosen(project):
    assert change(project, "{}\n", "agent: {yolo: {mode: subagent, permission: allow}}\n")[0].endswith(
        "agent.yolo: agent added: its rules were not in force before")
    found = change(project, "default_agent: plan\n", "default_agent: build\n")
    assert found and "default_agent: plan → build, which allows more" in found[0]


def test_a_secret_name_dropped_loosens(project):
    found = change(project, "secrets: {env: [DATABASE_URL, AWS_*]}\n", "secrets: {env: [AWS_*]}\n")
    assert found == [f"{project.repo}/opencode.yaml:1: secrets.env: no longer kept secret: DATABASE_URL"]


def test_a_global_rule_loosened_is_said_once_for_every_agent(project):
    found = change(project, "permission: {bash: ask}\n", "permission: {bash: allow}\n")
    assert len(found) == 1 and "ask → allow (every agent)" in found[0]


def test_without_the_built_in_rules_a_step_that_depends_on_them_counts_as_loosening(project):
    project.write("repo/opencode.yaml", "permission: {bash: allow}\n")
    old = project.load()
    project.write("repo/opencode.yaml", "permission: {bash: {'*': allow, 'rm *': ask}}\n")
    assert [item.what for item in loosenings(old, project.load())] == ["ask added (every agent)"]
    project.write("repo/opencode.yaml", "permission: {bash: {'*': allow, 'rm *': deny}}\n")
    assert loosenings(old, project.load()) == []


def test_checkpoints_recording_less_loosen_and_recording_more_does_not(project):
    assert change(project, "{}\n", "checkpoints: false\n") == [
        f"{project.repo}/opencode.yaml:1: checkpoints.enabled: switched off: later turns' file changes could not "
        "be undone"]
    found = change(project, "{}\n", "checkpoints: {max_file_mb: 1, keep_turns: 5}\n")
    assert [f.split(": ", 1)[1] for f in found] == [
        "checkpoints.max_file_mb: 20 MB → 1 MB: less that undo can take back",
        "checkpoints.keep_turns: 100 turns → 5 turns: less that undo can take back"]
    assert change(project, "checkpoints: {enabled: false, keep_turns: 5}\n", "checkpoints: {keep_turns: 500}\n") == []


def test_a_prompt_that_starts_reading_a_variable_loosens_and_says_whether_the_model_sees_it(project):
    found = change(project, "agent: {build: {prompt: hi}}\n",
                   "agent: {build: {prompt: 'hi {env:DEPLOY_TOKEN} {env:REGION}'}}\n")
    assert [f.split(": ", 1)[1] for f in found] == [
        "agent.build.prompt: now reads the variable $DEPLOY_TOKEN into the agent's system prompt (build) (a secret by "
        "its name: the model reads [redacted: DEPLOY_TOKEN] in its place)",
        "agent.build.prompt: now reads the variable $REGION into the agent's system prompt (build) (not a secret by "
        "its name: its value is sent as it is)"]
    same = "agent: {build: {prompt: 'hi {env:REGION}'}}\n"
    assert change(project, same, same.replace("hi", "hello")) == []  # the same variable, read before


def test_a_file_read_into_a_prompt_is_named_by_where_it_leads_and_its_text_never_shown(project):
    secret = project.write("home/.ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAsecretsecret\n"
                                                   "-----END OPENSSH PRIVATE KEY-----\n")
    found = change(project, "{}\n", f"command: {{ship: {{template: '{{file:{secret}}}'}}}}\n")
    assert len(found) == 2 and found[0].endswith("command.ship: added")
    assert found[1] == (f"{project.repo}/opencode.yaml:1: command.ship.template: now reads the file {secret} "
                        f"(outside the project; {secret.stat().st_size} bytes; a file that holds secrets: the model "
                        "reads its values as [redacted: ...]) into the command's prompt (ship)")
    assert not any("secretsecret" in f for f in found)
    notes = project.write("repo/notes.md", "plans\n")
    found = change(project, "command: {ship: {template: a}}\n", "command: {ship: {template: '{file:notes.md}'}}\n")
    assert found == [f"{project.repo}/opencode.yaml:1: command.ship.template: now reads the file {notes} (6 bytes; "
                     "its text is sent as it is) into the command's prompt (ship)"]


def test_an_instruction_file_added_loosens_and_one_kept_does_not(project):
    outside = project.write("elsewhere/rules.md", "be nice\n")
    project.write("repo/AGENTS2.md", "local\n")
    found = change(project, "instructions: [AGENTS2.md]\n", f"instructions: [AGENTS2.md, '{outside}']\n")
    assert found == [f"{project.repo}/opencode.yaml:1: instructions: adds the file {outside} (outside the project; "
                     "8 bytes; its text is sent as it is) to every agent's system prompt"]
    assert change(project, "instructions: [AGENTS2.md, '../*.md']\n", "instructions: [AGENTS2.md]\n") == []


def test_an_agent_file_s_frontmatter_prompt_reading_a_file_loosens_and_its_body_is_never_substituted(project):
    outside = project.write("home/notes.txt", "private\n")
    found = change(project, "---\nmode: subagent\nprompt: Review.\n---\n",
                   f"---\nmode: subagent\nprompt: '{{file:{outside}}}'\n---\n", file="repo/.opencode/agent/reviewer.md")
    assert found == [f"{project.repo}/.opencode/agent/reviewer.md:3: agent.reviewer.prompt: now reads the file "
                     f"{outside} (outside the project; 8 bytes; its text is sent as it is) into the agent's system "
                     "prompt (reviewer)"]
    assert change(project, "---\nmode: subagent\n---\nReview.\n", f"---\nmode: subagent\n---\n{{file:{outside}}}\n",
                  file="repo/.opencode/agent/reviewer.md") == []  # a body is the prompt as written: nothing is read


def test_a_provider_key_read_from_a_new_variable_is_said_once_without_a_word_about_the_model(project):
    found = change(project, "provider: {openai: {api_key: '{env:OPENAI_API_KEY}'}}\n",
                   "provider: {openai: {api_key: '{env:OTHER_KEY}'}}\n")
    assert [f.split(": ", 1)[1] for f in found] == ["provider.openai.api_key: now reads the variable $OTHER_KEY into "
                                                   "this value"]
