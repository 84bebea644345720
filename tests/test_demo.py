import io
import re

from opencode_nb.demo import demo


async def test_the_demo_runs_a_whole_multi_agent_session_offline_with_a_readable_transcript():
    out = io.StringIO()
    assert await demo(out=out) == 0
    text = out.getvalue()
    assert "you: The average temperature in summarise() looks too high." in text
    # delegation: the child's work is printed nested under the task call
    assert "  ▸ task @explore — Survey the project" in text
    assert re.search(r"\n {6}task prompt: Survey this small Python project", text)
    assert re.search(r"\n {8}✓ grep def \(mean\|median\|summarise\)", text)
    assert "  ✓ task Survey the project" in text
    # plan mode, entered and left with the person's consent
    assert "Switch to the plan agent" in text and "the demo's policy answers: Yes" in text
    assert re.search(r"plan asks for edit: \.opencode/plans/\S+\.md", text)
    assert "plan: The plan is written." in text and "(mode switch) The plan at .opencode/plans/" in text
    # the change itself, behind a permission ask, then verified
    assert "? build asks for edit: stats.py — the demo's policy answers: allow once" in text
    assert "✓ bash Run the project's self-check" in text and "all checks passed" in text
    assert "[x] Run the self-check" in text
    assert "build: Fixed:" in text and "tokens" in text


async def test_with_a_real_model_the_same_demo_talks_to_its_api(tmp_path, monkeypatch):
    from tests.provider.wire import WireServer, anthropic_stream

    server = WireServer()
    try:
        config = tmp_path / "opencode.yaml"
        config.write_text(f"provider:\n  anthropic:\n    base_url: {server.url}\n    api_key: sk-demo-test\n")
        monkeypatch.setenv("OPENCODE_NB_CONFIG", str(config))
        server.queue(anthropic_stream({"text": "The mean divides by n - 1; I would fix that."}),
                     anthropic_stream({"text": "Mean bug"}))
        out = io.StringIO()
        assert await demo("anthropic/claude-sonnet-4-6", out=out) == 0
        assert "model: anthropic/claude-sonnet-4-6" in out.getvalue()
        assert "build: The mean divides by n - 1" in out.getvalue()
        assert server.received[0].body["messages"][0]["content"][0]["text"].startswith("The average temperature")
    finally:
        server.close()


def test_demo_notebook_executes_the_quickstart_headless_and_saves_the_transcripts(tmp_path, monkeypatch):
    import shutil

    import nbformat

    from opencode_nb.demo import quickstart_path, run_notebook

    notebook = tmp_path / "quickstart.ipynb"
    shutil.copy(quickstart_path(), notebook)
    monkeypatch.setenv("OPENCODE_NB_DATA_DIR", str(tmp_path / "data"))
    out = io.StringIO()
    assert run_notebook(notebook, out=out) == 0
    executed = nbformat.read(tmp_path / "quickstart.executed.ipynb", as_version=4)
    html = "".join(o.get("data", {}).get("text/html", "") for c in executed.cells for o in c.get("outputs", []))
    assert 'class="ocnb-transcript"' in html
    assert '<details class="ocnb-child"' in html and "@explore — Survey the project" in html
    assert "allowed once" in html and "allowed by policy: nobody is present to ask" in html
    assert "Switch to the plan agent" in html and "plan_exit" in html
    assert "ocnb-todos" in html and "Run the self-check" in html
    assert "all checks passed" in html
