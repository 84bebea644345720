import io

from opencode_nb.demo import demo


async def test_the_demo_runs_a_whole_session_offline_and_prints_a_readable_transcript():
    out = io.StringIO()
    assert await demo(out=out) == 0
    text = out.getvalue()
    assert "you: The average temperature in summarise() looks too high." in text
    assert "✓ read README.md" in text and "✓ grep def (mean|summarise)" in text
    assert "? build asks for edit: stats.py — the demo's policy answers: allow once" in text
    assert "✓ edit stats.py" in text and "✓ bash Run the project's self-check" in text
    assert "all checks passed" in text
    assert "[x] Run the self-check" in text
    assert "agent: Fixed:" in text and "tokens" in text
