"""Every text a run shows, live and in the saved transcript, keeps WCAG AA contrast (4.5:1) against what is
really behind it, in JupyterLab's dark theme and in its light one: the labels of its buttons too.

The page itself is measured: each element with text of its own gets its computed colour painted over the
backgrounds of all its ancestors on a 1×1 canvas, so alpha, `color-mix` and theme variables are resolved by
the browser exactly as the person sees them.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from .lab import Lab

pytestmark = pytest.mark.e2e

RUN = [
    {"reasoning": "The check may fail.", "text": "Checking the build.", "tool_calls": [{"name": "bash", "input": {
        "command": "echo broken; exit 2", "description": "Run the check"}}, {"name": "python", "input": {
        "code": "total = sum(range(10))  # add up\nprint(f'total: {total}')", "description": "Add up"}}]},
    {"tool_calls": [{"name": "task", "input": {"description": "Survey the files", "prompt": "List the files.",
                                                "subagent_type": "explore"}}]},
    {"text": "One file: notes.txt."},
    {"text": "Done: the check **failed** with exit 2; the survey found notes.txt."},
]
"""One run: a failing command the person allows, highlighted code, a reasoning block, a child session, an answer."""

CONTRAST_JS = """(roots) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const paint = (color) => { ctx.fillStyle = color; ctx.fillRect(0, 0, 1, 1); };
  const pixel = () => Array.from(ctx.getImageData(0, 0, 1, 1).data).slice(0, 3);
  const channel = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const lum = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const found = [];
  for (const root of document.querySelectorAll(roots)) {
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const text = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
      if (!text || !el.getClientRects().length || el.closest('button:disabled')) continue;
      const chain = [];
      for (let e = el; e; e = e.parentElement) chain.unshift(e);
      ctx.clearRect(0, 0, 1, 1);
      paint('#ffffff');
      for (const e of chain) paint(getComputedStyle(e).backgroundColor);
      const bg = pixel();
      const color = getComputedStyle(el).color;
      paint(color);
      const fg = pixel();
      const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      found.push({text: text.slice(0, 50), cls: String(el.className), color, fg, bg,
                  ratio: Math.round((hi + 0.05) / (lo + 0.05) * 100) / 100});
    }
  }
  return found;
}"""

LIVE = ".ocnb-session .widget-html-content, .ocnb-session .jupyter-button"
"""The run's text and its buttons: a button's label is measured against the button's own background (a
disabled one is left out: it is not there to be read, and WCAG exempts it)."""
SAVED = ".jp-NotebookPanel:not(.lm-mod-hidden) .ocnb-transcript"


def use_theme(lab: Lab, theme: str, background: str) -> None:
    lab.page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
    lab.page.wait_for_function(
        "(bg) => getComputedStyle(document.body).getPropertyValue('--jp-layout-color0').trim() === bg", arg=background)


def measured(lab: Lab, roots: str) -> list[dict[str, Any]]:
    texts = lab.page.evaluate(CONTRAST_JS, roots)
    assert texts, f"nothing with text under {roots}"
    return texts


def failing(texts: list[dict[str, Any]]) -> list[str]:
    return [f"{t['ratio']}:1 {t['text']!r} ({t['cls']}: {t['color']} on rgb{tuple(t['bg'])})"
            for t in texts if t["ratio"] < 4.5]


@pytest.mark.parametrize(("theme", "background"), [("JupyterLab Dark", "#111"), ("JupyterLab Light", "white")])
def test_every_text_of_a_run_keeps_aa_contrast_live_and_saved(lab: Lab, theme: str, background: str) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": {"bash": "ask", "python": "allow"},
        "provider": {"scripted": {"script": RUN}}}))
    (lab.root / "notes.txt").write_text("hello\n")
    name = f"contrast-{theme.split()[-1].lower()}.ipynb"
    lab.write_notebook(name, ["%load_ext opencode_nb", "%%agent\nCheck the build, then survey the files."])
    nb = lab.open_notebook(name)
    use_theme(lab, theme, background)
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")

    allow = nb.locator("button.jupyter-button", has_text="Allow once")
    allow.wait_for(timeout=30_000)
    nb.locator(".ocnb-header").first.wait_for()
    live = measured(lab, LIVE)
    assert any("ocnb-header" in t["cls"] for t in live)
    labels = {t["text"] for t in live if "jupyter-button" in t["cls"]}
    assert {"Allow once", "Always allow", "Reject", "Stop"} <= labels, f"the buttons were measured: {labels}"
    assert failing(live) == []

    allow.click()
    lab.wait_cell_done(1, timeout=30)
    lab.wait_output(1, "the survey found notes.txt")
    nb.locator(".ocnb-transcript").first.wait_for()
    nb.locator(".ocnb-transcript details.ocnb-child summary").first.click()
    nb.locator(".ocnb-transcript details.ocnb-reasoning summary").first.click()
    nb.locator(".ocnb-transcript details:has(> pre.ocnb-code) > summary").first.click()
    saved = measured(lab, SAVED)
    assert {"sum", "# add up"} <= {t["text"] for t in saved}, "the highlighted code was measured"
    classes = " ".join(t["cls"] for t in saved)
    for seen in ("ocnb-header", "ocnb-tool-state", "ocnb-ask-record"):
        assert seen in classes, f"{seen} was not measured"
    assert any(t["text"].startswith("✗ exit 2") for t in saved), "the failed command is shown failed"
    assert failing(saved) == []
