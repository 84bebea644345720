import datetime as dt
from pathlib import Path

from opencode_nb.session import system


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_each_provider_family_gets_its_own_base_prompt():
    claude = system.base_prompt("anthropic/claude-sonnet-4-5")
    gpt = system.base_prompt("openai/gpt-5")
    other = system.base_prompt("ollama/qwen3")
    assert len({claude, gpt, other}) == 3
    assert system.base_prompt("openai/o3") == gpt


def test_the_environment_block_names_directory_root_git_and_date(tmp_path):
    (tmp_path / ".git").mkdir()
    block = system.environment_block(tmp_path, tmp_path, "scripted/demo", today=dt.date(2026, 11, 22))
    assert f"Working directory: {tmp_path}" in block
    assert "Is directory a git repo: yes" in block
    assert "Today's date: Sun Nov 22 2026" in block


def test_the_file_tree_honours_gitignore_and_is_bounded(tmp_path):
    make(tmp_path, {".gitignore": "secret/\n*.log\n", "src/a.py": "", "secret/k.txt": "", "run.log": "",
                    "node_modules/x/y.js": ""})
    tree = system.file_tree(tmp_path)
    assert "src/" in tree and "  a.py" in tree
    assert "secret" not in tree and "run.log" not in tree and "node_modules" not in tree
    make(tmp_path, {f"many/f{i:03}.txt": "" for i in range(50)})
    short = system.file_tree(tmp_path, limit=10)
    assert len(short.splitlines()) == 11
    assert "more entries not shown" in short.splitlines()[-1]


def test_agents_md_is_found_from_the_working_directory_up_to_the_root(tmp_path):
    make(tmp_path, {"AGENTS.md": "root rules", "pkg/AGENTS.md": "pkg rules", "pkg/sub/x.py": "",
                    "CLAUDE.md": "ignored: AGENTS.md was found"})
    found = system.find_instruction_files(tmp_path / "pkg" / "sub", tmp_path)
    assert found == [tmp_path / "AGENTS.md", tmp_path / "pkg" / "AGENTS.md"]


def test_claude_md_is_used_when_there_is_no_agents_md(tmp_path):
    make(tmp_path, {"CLAUDE.md": "rules"})
    assert system.find_instruction_files(tmp_path, tmp_path) == [tmp_path / "CLAUDE.md"]


def test_files_above_the_project_root_are_not_read(tmp_path):
    make(tmp_path, {"AGENTS.md": "outside", "proj/.git/HEAD": "", "proj/a.py": ""})
    assert system.find_instruction_files(tmp_path / "proj", tmp_path / "proj") == []


def test_global_and_configured_instructions_come_first_and_last(tmp_path):
    make(tmp_path, {"cfg/AGENTS.md": "global", "proj/AGENTS.md": "project", "proj/docs/style.md": "style",
                    "proj/docs/data.md": "data"})
    found = system.find_instruction_files(
        tmp_path / "proj", tmp_path / "proj", global_dir=tmp_path / "cfg", extra=["docs/*.md"]
    )
    assert found == [tmp_path / "cfg/AGENTS.md", tmp_path / "proj/AGENTS.md",
                     tmp_path / "proj/docs/data.md", tmp_path / "proj/docs/style.md"]
    blocks = system.instruction_blocks(found)
    assert blocks[0] == f"Instructions from: {tmp_path / 'cfg/AGENTS.md'}\nglobal"


def test_the_system_prompt_is_base_then_agent_then_environment_then_instructions():
    blocks = system.assemble(model_id="anthropic/claude-sonnet-4-5", agent_prompt="You plan.",
                             environment="<env/>", instructions=["Instructions from: A\nx"], user_system="extra")
    assert blocks[1:] == ["You plan.", "<env/>", "Instructions from: A\nx", "extra"]
    assert blocks[0] == system.base_prompt("anthropic/claude-sonnet-4-5")


def test_what_is_sent_has_its_system_blocks_and_tool_descriptions_redacted_but_not_tool_names():
    from opencode_nb import secrets
    from opencode_nb.provider.catalog import model_info
    from opencode_nb.provider.request import LLMRequest, ToolSpec

    token = "tok-5e1d9a7c3b2f8e6d"
    known = secrets.SecretSet(values={token: "DEPLOY_TOKEN"})
    forget = secrets.register(known)
    try:
        quiet = ToolSpec(name="read", description="Read a file.", parameters={"type": "object"})
        loud = ToolSpec(name="db_query", description=f"Runs queries as {token}.",
                        parameters={"type": "object", "properties": {"key": {"default": token}}})
        request = LLMRequest(model=model_info("scripted", "demo"), system=["base", f"use {token}"], tools=[quiet, loud])
        sent = system.outgoing(request)
        assert sent.system == ["base", "use [redacted: DEPLOY_TOKEN]"]
        assert sent.tools[0] is quiet and sent.tools[1].name == "db_query"
        assert token not in sent.tools[1].model_dump_json()
        clean = request.model_copy(update={"system": ["base"], "tools": [quiet]})
        assert system.outgoing(clean) is clean  # nothing secret: the very same request, nothing copied
    finally:
        forget()


def test_an_instruction_file_that_holds_secrets_has_its_values_learnt_as_it_is_read(tmp_path):
    from opencode_nb import secrets

    key = tmp_path / "keys" / "id_ed25519"
    key.parent.mkdir()
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
                   "-----END OPENSSH PRIVATE KEY-----\n")
    [block] = system.instruction_blocks([key])
    assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" not in secrets.redact(block)
