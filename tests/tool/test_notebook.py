"""The notebook tools: read, edit and run cells through `ctx.notebook`, alone and through the agent loop.

`MemoryNotebook` is a notebook held in a list that runs its code cells with `exec` in one namespace (the
"kernel"), so outputs, errors and execution counts come from the cells' real sources. `show_png(b64)` in a
cell displays an image.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import itertools
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.errors import DeniedError, ToolError
from opencode_nb.provider import Scripted
from opencode_nb.provider.request import ToolResultBlock
from opencode_nb.tool.context import NotebookRefused
from opencode_nb.tool.notebook_edit import NotebookEditTool
from opencode_nb.tool.notebook_read import NotebookReadTool
from opencode_nb.tool.notebook_run import MAX_IMAGES, NotebookRunTool
from opencode_nb.tool.registry import default_registry
from opencode_nb.values import Cell, CellRun, NewCell, NotebookSnapshot

from .fakes import RecordingContext

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 1200).decode()


class MemoryNotebook:
    """A `NotebookAccess` over a list of cells; `refuse` makes every change fail as a busy file would."""

    def __init__(self, cells: list[Cell], *, calling: str | None = None, live: bool = True,
                 path: str = "analysis.ipynb") -> None:
        self.cells = list(cells)
        self.calling = calling
        self.live = live
        self.path = path
        self.refuse: str | None = None
        self.pause_s = 0.0
        """How long each cell takes, so streamed output has time to reach the card."""
        self.namespace: dict[str, Any] = {}
        self.ran: list[str] = []
        self.counter = itertools.count(1)
        self.new_ids = (f"new{n}" for n in itertools.count(1))

    def calling_cell(self, session_id: str) -> str | None:
        return self.calling

    def ids(self) -> list[str]:
        return [c.id for c in self.cells]

    def get(self, cell_id: str) -> Cell:
        return self.cells[self._index(cell_id)]

    def _index(self, cell_id: str) -> int:
        for i, cell in enumerate(self.cells):
            if cell.id == cell_id:
                return i
        raise NotebookRefused(f"There is no cell {cell_id} in the notebook. Read the notebook to see its cells' ids.")

    def _check(self) -> None:
        if self.refuse:
            raise NotebookRefused(self.refuse)

    async def read(self, cell_ids: list[str] | None = None) -> NotebookSnapshot:
        cells = self.cells if cell_ids is None else [self.get(i) for i in cell_ids]
        running = next((c.id for c in self.cells if c.running), None)
        return NotebookSnapshot(path=self.path, source="live" if self.live else "file", cells=cells,
                                total=len(self.cells), running_cell=running)

    async def insert(self, cells: list[NewCell], *, after: str | None, session_id: str) -> list[str]:
        self._check()
        anchor = after or self.calling
        at = self._index(anchor) + 1 if anchor else len(self.cells)
        made = [Cell(id=next(self.new_ids), cell_type=c.cell_type, source=c.source, metadata=c.metadata)
                for c in cells]
        self.cells[at:at] = made
        return [c.id for c in made]

    async def replace(self, cell_id: str, *, source: str, cell_type: str | None, session_id: str) -> Cell:
        self._check()
        i = self._index(cell_id)
        old = self.cells[i]
        self.cells[i] = old.model_copy(update={"source": source, "cell_type": cell_type or old.cell_type})
        return old

    async def delete(self, cell_ids: list[str], *, session_id: str) -> list[Cell]:
        self._check()
        gone = [self.cells.pop(self._index(i)) for i in cell_ids]
        return gone

    async def run(self, cell_ids: list[str], *, timeout_s: float, session_id: str,
                  on_output: Callable[[str], None]) -> list[CellRun]:
        results: list[CellRun] = []
        for cell_id in cell_ids:
            if results and results[-1].status != "ok":
                results.append(CellRun(id=cell_id, status="aborted"))
                continue
            results.append(self._run_one(cell_id, on_output))
            await asyncio.sleep(self.pause_s)
        return results

    def _run_one(self, cell_id: str, on_output: Callable[[str], None]) -> CellRun:
        i = self._index(cell_id)
        cell = self.cells[i]
        if cell.cell_type != "code":
            return CellRun(id=cell_id, status="ok")
        self.ran.append(cell_id)
        outputs: list[dict[str, Any]] = []
        self.namespace["show_png"] = lambda data: outputs.append(
            {"output_type": "display_data", "data": {"image/png": data, "text/plain": "<Figure>"}, "metadata": {}})
        stdout = io.StringIO()
        status = "ok"
        try:
            with contextlib.redirect_stdout(stdout):
                exec(compile(cell.source, f"<cell {cell_id}>", "exec"), self.namespace)
        except Exception as exc:
            status = "error"
            error = {"output_type": "error", "ename": type(exc).__name__, "evalue": str(exc),
                     "traceback": traceback.format_exception(exc)}
        if stdout.getvalue():
            on_output(stdout.getvalue())
            outputs.insert(0, {"output_type": "stream", "name": "stdout", "text": stdout.getvalue()})
        if status == "error":
            outputs.append(error)
        count = next(self.counter)
        self.cells[i] = cell.model_copy(update={"execution_count": count, "outputs": outputs})
        return CellRun(id=cell_id, status=status, execution_count=count, outputs=outputs)


def sample() -> MemoryNotebook:
    return MemoryNotebook([
        Cell(id="intro", cell_type="markdown", source="# Sales\nA look at the sales data."),
        Cell(id="load", cell_type="code", source="rows = [3, 1, 2]\nprint(len(rows), 'rows')", execution_count=1,
             outputs=[{"output_type": "stream", "name": "stdout", "text": "3 rows\n"}]),
        Cell(id="plot", cell_type="code", source="show_png(PNG)", execution_count=2,
             outputs=[{"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure>"}}]),
        Cell(id="agent", cell_type="code", source="%%agent\nsummarise the sales", running=True),
        Cell(id="total", cell_type="code", source="total = sum(rows)\nprint('total', total)"),
    ], calling="agent")


@pytest.fixture
def notebook():
    return sample()


@pytest.fixture
def nb_ctx(ctx, notebook):
    ctx.notebook = notebook
    return ctx


# ---------------------------------------------------------------------------------------------- no notebook


@pytest.mark.parametrize(("tool", "raw"), [
    (NotebookReadTool(), {}),
    (NotebookEditTool(), {"action": "insert", "source": "x = 1"}),
    (NotebookRunTool(), {"cell_ids": ["load"]}),
])
async def test_without_a_notebook_each_tool_says_it_works_inside_a_kernel_with_the_notebook_open(ctx, tool, raw):
    with pytest.raises(ToolError, match="work only inside a Jupyter kernel with the notebook open"):
        await tool.run(raw, ctx)
    assert ctx.asked == []


def test_the_tools_are_registered_with_the_parameter_names_of_the_design():
    registry = default_registry()
    expected = {"notebook_read": {"cell_ids"}, "notebook_edit": {"action", "cell_id", "after", "cell_type", "source"},
                "notebook_run": {"cell_ids"}}
    for spec in registry.specs(list(expected)):
        assert set(spec.parameters["properties"]) == expected[spec.name]
        assert "id" in spec.description and len(spec.description) > 300
    edit = registry.get("notebook_edit").spec().parameters
    assert edit["required"] == ["action"] and edit["properties"]["action"]["enum"] == ["insert", "replace", "delete"]
    assert "live kernel" in registry.get("notebook_run").spec().description


# ---------------------------------------------------------------------------------------------- read


async def test_reading_the_notebook_gives_one_block_per_cell_with_ids_sources_and_summarised_outputs(nb_ctx):
    result = await NotebookReadTool().run({}, nb_ctx)
    text = result.output
    assert text.startswith("Notebook analysis.ipynb, read from the live notebook (the person's unsaved edits "
                           "included): 5 cells. Cell agent is running.")
    blocks = text.split("\n\n")[1:]
    assert [b.splitlines()[0] for b in blocks] == [
        "[cell intro] #1 markdown",
        "[cell load] #2 code · In [1]",
        "[cell plot] #3 code · In [2]",
        "[cell agent] #4 code · running · the agent's own cell (inserts go below it by default)",
        "[cell total] #5 code · not run",
    ]
    assert blocks[1] == ("[cell load] #2 code · In [1]\nrows = [3, 1, 2]\nprint(len(rows), 'rows')\n"
                         "--- outputs ---\n3 rows")
    assert "<Figure>\n[image/png, 1.2 KB]" in blocks[2] and PNG not in text
    assert result.title == "all 5 cells" and result.attachments == []
    assert result.metadata["source"] == "live" and result.metadata["running_cell"] == "agent"
    assert nb_ctx.permissions() == [("notebook_read", ["*"])]


async def test_reading_cells_by_id_shows_only_those_and_says_how_many_there_are(nb_ctx):
    result = await NotebookReadTool().run({"cell_ids": ["total", "intro"]}, nb_ctx)
    head, *blocks = result.output.split("\n\n")
    assert "5 cells; showing 2." in head
    assert [b.splitlines()[0] for b in blocks] == ["[cell total] code · not run", "[cell intro] markdown"]
    assert result.title == "cells [total], [intro]"
    assert nb_ctx.permissions() == [("notebook_read", ["total", "intro"])]


async def test_an_unknown_id_is_an_error_naming_it(nb_ctx):
    with pytest.raises(ToolError, match="There is no cell nope in the notebook"):
        await NotebookReadTool().run({"cell_ids": ["nope"]}, nb_ctx)


async def test_a_notebook_read_from_disk_says_unsaved_edits_are_not_seen(ctx):
    ctx.notebook = MemoryNotebook([Cell(id="a", cell_type="code", source="")], live=False)
    result = await NotebookReadTool().run({}, ctx)
    assert "read from the file on disk (edits not yet saved in an open editor are not seen)" in result.output
    assert result.output.endswith("[cell a] #1 code · not run\n(empty)")


async def test_a_long_notebook_is_cut_and_saved_whole_like_any_long_output(ctx):
    ctx.notebook = MemoryNotebook([Cell(id=f"c{i}", cell_type="code", source=f"x = {i}\n" * 5) for i in range(800)])
    result = await NotebookReadTool().run({}, ctx)
    assert result.metadata["truncated"] is True
    assert "(Output truncated:" in result.output and len(result.output.encode()) < 60 * 1024
    saved = Path(result.metadata["output_path"]).read_text(encoding="utf-8")
    assert "[cell c799] #800 code" in saved


async def test_a_long_output_is_cut_to_its_head_and_tail(ctx):
    log = "".join(f"epoch {i}\n" for i in range(5000))
    ctx.notebook = MemoryNotebook([Cell(id="train", cell_type="code", source="train()", execution_count=1,
                                        outputs=[{"output_type": "stream", "name": "stdout", "text": log}])])
    text = (await NotebookReadTool().run({}, ctx)).output
    assert "epoch 0\n" in text and "epoch 4999" in text and "characters cut" in text and "epoch 2500" not in text


# ---------------------------------------------------------------------------------------------- edit


async def test_insert_goes_below_the_calling_cell_and_marks_the_cell_with_the_session_and_call(nb_ctx, notebook):
    result = await NotebookEditTool().run({"action": "insert", "source": "print(total / len(rows))"}, nb_ctx)
    assert notebook.ids() == ["intro", "load", "plot", "agent", "new1", "total"]
    new = notebook.get("new1")
    assert new.cell_type == "code" and new.source == "print(total / len(rows))"
    assert new.metadata == {"opencode_nb": {"session": "ses_test", "call": "call_1"}}
    assert result.output == ("Inserted code cell new1 below the agent's cell agent. It has not been run: run it with "
                             "notebook_run.")
    assert result.metadata["cell_ids"] == ["new1"] and result.title == "insert below [agent] → [new1]"
    [asked] = nb_ctx.asked
    assert (asked.permission, asked.patterns, asked.always) == ("notebook_edit", ["insert"], ["insert"])
    assert "+print(total / len(rows))" in asked.metadata["diff"]
    assert asked.metadata["where"] == "below the agent's cell agent"


async def test_insert_after_a_given_cell_and_of_a_given_type(nb_ctx, notebook):
    result = await NotebookEditTool().run(
        {"action": "insert", "after": "intro", "cell_type": "markdown", "source": "## Loading"}, nb_ctx)
    assert notebook.ids()[:3] == ["intro", "new1", "load"] and notebook.get("new1").cell_type == "markdown"
    assert result.output == "Inserted markdown cell new1 below cell intro."
    assert nb_ctx.asked[0].metadata["where"] == "below cell intro"


async def test_insert_after_an_unknown_cell_asks_nobody_and_changes_nothing(nb_ctx, notebook):
    with pytest.raises(ToolError, match="There is no cell ghost"):
        await NotebookEditTool().run({"action": "insert", "after": "ghost", "source": "x"}, nb_ctx)
    assert nb_ctx.asked == [] and len(notebook.cells) == 5


async def test_replace_asks_with_the_cells_diff_then_changes_it(nb_ctx, notebook):
    result = await NotebookEditTool().run(
        {"action": "replace", "cell_id": "total", "source": "total = sum(rows)\nprint('total:', total)"}, nb_ctx)
    assert notebook.get("total").source == "total = sum(rows)\nprint('total:', total)"
    [asked] = nb_ctx.asked
    assert (asked.permission, asked.patterns) == ("notebook_edit", ["replace"])
    diff = asked.metadata["diff"]
    assert "--- a/cell total" in diff and "-print('total', total)" in diff and "+print('total:', total)" in diff
    assert " total = sum(rows)" in diff
    assert result.metadata["cell_ids"] == ["total"] and result.title == "replace [total]"
    assert result.output.startswith("Replaced the source of cell total (+1 -1 lines).")


async def test_replace_can_change_a_cells_type_and_the_prompt_says_so(nb_ctx, notebook):
    await NotebookEditTool().run({"action": "replace", "cell_id": "total", "cell_type": "markdown",
                                  "source": "Total of the rows."}, nb_ctx)
    assert notebook.get("total").cell_type == "markdown"
    assert nb_ctx.asked[0].metadata["where"] == "cell total (code → markdown)"


async def test_replacing_a_cell_with_its_own_source_is_an_error(nb_ctx):
    with pytest.raises(ToolError, match="nothing to change"):
        await NotebookEditTool().run({"action": "replace", "cell_id": "intro",
                                      "source": "# Sales\nA look at the sales data."}, nb_ctx)
    assert nb_ctx.asked == []


async def test_delete_asks_with_the_removed_cell_then_removes_it(nb_ctx, notebook):
    result = await NotebookEditTool().run({"action": "delete", "cell_id": "load"}, nb_ctx)
    assert "load" not in notebook.ids()
    [asked] = nb_ctx.asked
    assert (asked.permission, asked.patterns) == ("notebook_edit", ["delete"])
    diff = asked.metadata["diff"].splitlines()
    assert "-rows = [3, 1, 2]" in diff and not [line for line in diff[2:] if line.startswith("+")]
    assert result.output == "Deleted code cell load." and result.metadata["cell_ids"] == ["load"]


@pytest.mark.parametrize("raw", [{"action": "delete", "cell_id": "agent"},
                                 {"action": "replace", "cell_id": "agent", "source": "%%agent\nsomething else"}])
async def test_the_cell_the_agent_was_called_from_is_never_replaced_or_deleted(nb_ctx, notebook, raw):
    with pytest.raises(ToolError, match="the cell this agent was called from"):
        await NotebookEditTool().run(raw, nb_ctx)
    assert notebook.get("agent").source == "%%agent\nsummarise the sales" and nb_ctx.asked == []


@pytest.mark.parametrize(("raw", "says"), [
    ({"action": "delete"}, "- delete needs `cell_id`: the id of the cell (notebook_read lists the ids)."),
    ({"action": "insert"}, "- insert needs `source`: the cell's whole content."),
    ({"action": "replace", "source": "x"}, "- replace needs `cell_id`"),
    ({"action": "replace", "cell_id": "total"}, "- replace needs `source`"),
    ({"action": "insert", "cell_id": "load", "source": "x"},
     "- insert does not take `cell_id`: to place the new cell below a cell, give that cell's id as `after`."),
    ({"action": "delete", "cell_id": "load", "after": "intro"},
     "- delete does not take `after`: `after` is only for insert"),
    ({"action": "delete", "cell_id": "load", "source": "x"}, "to change its content, use replace"),
    ({"action": "move", "cell_id": "load"}, "- action: Input should be 'insert', 'replace' or 'delete'"),
])
async def test_a_malformed_call_is_an_error_the_model_can_act_on_and_changes_nothing(nb_ctx, notebook, raw, says):
    with pytest.raises(ToolError) as error:
        await NotebookEditTool().run(raw, nb_ctx)
    assert says in str(error.value)
    assert nb_ctx.asked == [] and len(notebook.cells) == 5 and notebook.get("total").source.startswith("total")


async def test_a_refusal_of_the_notebook_becomes_the_tools_error(nb_ctx, notebook):
    notebook.refuse = "The notebook has unsaved changes in another window: save it, then try again."
    with pytest.raises(ToolError, match="unsaved changes in another window: save it, then try again"):
        await NotebookEditTool().run({"action": "insert", "source": "x = 1"}, nb_ctx)


async def test_a_denied_edit_changes_nothing(project, notebook):
    ctx = RecordingContext(project, deny=["notebook_edit"])
    ctx.notebook = notebook
    with pytest.raises(DeniedError):
        await NotebookEditTool().run({"action": "delete", "cell_id": "load"}, ctx)
    assert "load" in notebook.ids()


# ---------------------------------------------------------------------------------------------- run


async def test_run_asks_for_the_cells_with_their_sources_and_returns_outputs_and_images(nb_ctx, notebook):
    nb_ctx.notebook.namespace["PNG"] = PNG
    result = await NotebookRunTool().run({"cell_ids": ["load", "plot", "total"]}, nb_ctx)
    [asked] = nb_ctx.asked
    assert (asked.permission, asked.patterns, asked.always) == ("notebook_run", ["load", "plot", "total"],
                                                                ["load", "plot", "total"])
    assert [c["source"] for c in asked.metadata["cells"]] == [notebook.get(i).source for i in ("load", "plot", "total")]
    assert notebook.ran == ["load", "plot", "total"]
    assert result.output == (
        "Ran 3 cells in the person's kernel.\n\n"
        "[cell load] ok · In [1]\n3 rows\n\n"
        "[cell plot] ok · In [2]\n<Figure>\n[image/png, 1.2 KB, attached]\n\n"
        "[cell total] ok · In [3]\ntotal 6")
    [image] = result.attachments
    assert image.mime == "image/png" and image.url == f"data:image/png;base64,{PNG}"
    assert result.title == "run [load], [plot], [total]"
    assert [r["status"] for r in result.metadata["runs"]] == ["ok", "ok", "ok"]


async def test_output_streams_to_the_card_while_the_cells_run(nb_ctx, notebook):
    notebook.pause_s = 0.15  # the card is sent the output's tail at most every 0.1 s
    await NotebookRunTool().run({"cell_ids": ["load", "total"]}, nb_ctx)
    assert nb_ctx.updates[0][0] == "run [load], [total]"
    streamed = [meta["output"] for _, meta in nb_ctx.updates if meta and "output" in meta]
    assert streamed[0] == "3 rows\n" and streamed[-1] == "3 rows\ntotal 6\n"


async def test_a_failing_cell_is_an_error_with_its_traceback_what_ran_before_and_what_did_not_run(nb_ctx, notebook):
    await NotebookEditTool().run({"action": "replace", "cell_id": "plot", "source": "print('plotting')\n1 / 0"},
                                 nb_ctx)
    with pytest.raises(ToolError) as error:
        await NotebookRunTool().run({"cell_ids": ["load", "plot", "total"]}, nb_ctx)
    text = str(error.value)
    assert text.startswith("Cell plot raised an error. Ran before it: load.\n\nNot run: total.\n\n"
                           "Fix the cell (notebook_edit replace) and run it again")
    assert "[cell load] ok · In [1]\n3 rows" in text
    assert "[cell plot] error · In [2]\nplotting\nZeroDivisionError: division by zero\n  Traceback (most recent" in text
    assert 'File "<cell plot>", line 2' in text
    assert notebook.ran == ["load", "plot"] and notebook.get("total").execution_count is None


async def test_a_huge_output_comes_back_bounded(nb_ctx, notebook):
    await NotebookEditTool().run({"action": "replace", "cell_id": "total",
                                  "source": "for i in range(100_000):\n    print('line', i)"}, nb_ctx)
    result = await NotebookRunTool().run({"cell_ids": ["total"]}, nb_ctx)
    assert len(result.output) < 3000 and "line 0\n" in result.output and "line 99999" in result.output


async def test_images_past_the_limit_are_named_but_not_attached(nb_ctx, notebook):
    notebook.namespace["PNG"] = PNG
    await NotebookEditTool().run({"action": "replace", "cell_id": "total",
                                  "source": f"for _ in range({MAX_IMAGES + 1}):\n    show_png(PNG)"}, nb_ctx)
    result = await NotebookRunTool().run({"cell_ids": ["plot", "total"]}, nb_ctx)
    assert len(result.attachments) == 1
    assert result.output.count("[image/png, 1.2 KB]") == MAX_IMAGES + 1


async def test_the_calling_cell_is_not_run_and_unknown_cells_are_errors(nb_ctx, notebook):
    with pytest.raises(ToolError, match="the cell this agent was called from"):
        await NotebookRunTool().run({"cell_ids": ["load", "agent"]}, nb_ctx)
    with pytest.raises(ToolError, match="There is no cell nope"):
        await NotebookRunTool().run({"cell_ids": ["nope"]}, nb_ctx)
    with pytest.raises(ToolError, match="at least 1 item"):
        await NotebookRunTool().run({"cell_ids": []}, nb_ctx)
    assert notebook.ran == [] and nb_ctx.asked == []


# ---------------------------------------------------------------------------------------------- the loop


def workspace(tmp_path, config: dict | None = None, notebook: MemoryNotebook | None = None):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    model = Scripted()
    ws = Workspace(root, {"model": "scripted/demo", **(config or {})}, data_dir=tmp_path / "data",
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    ws.providers.register("scripted", model)
    ws.notebook = notebook or sample()
    ws.notebook.namespace["PNG"] = PNG
    events: list = []
    ws.bus.subscribe("*", events.append)
    return ws, model, events


def script(model: Scripted, *turns: dict) -> None:
    model.turns.extend(Scripted(list(turns)).turns)


def results(model: Scripted) -> list[ToolResultBlock]:
    """The tool results in the latest step request: what the model was told."""
    [*_, last] = [r for r in model.requests if r.purpose == "step"]
    return [b for m in last.messages for b in m.content if isinstance(b, ToolResultBlock)]


async def run(ws: Workspace, agent: str | None = None):
    session = ws.sessions.create()
    return await asyncio.wait_for(ws.prompt(session.id, "go", agent=agent), 10)


async def test_in_the_loop_run_results_and_images_reach_the_model(tmp_path):
    ws, model, _ = workspace(tmp_path, {"permission": {"notebook_run": "allow"}})
    script(model, {"tool_calls": [{"name": "notebook_run", "input": {"cell_ids": ["load", "plot"]}}]},
           {"text": "done"})
    await run(ws)
    [result] = results(model)
    assert not result.is_error and "[cell load] ok · In [1]\n3 rows" in result.output
    [image] = result.images
    assert image.mime == "image/png" and image.data == PNG
    ws.close()


async def test_in_the_loop_a_failing_cell_is_an_error_result_and_the_model_carries_on(tmp_path):
    notebook = sample()
    notebook.cells[1] = notebook.cells[1].model_copy(update={"source": "raise ValueError('no rows')"})
    ws, model, _ = workspace(tmp_path, {"permission": {"notebook_run": "allow"}}, notebook)
    script(model, {"tool_calls": [{"name": "notebook_run", "input": {"cell_ids": ["load", "total"]}}]},
           {"text": "I will fix the cell."})
    answer = await run(ws)
    [result] = results(model)
    assert result.is_error and "ValueError: no rows" in result.output and "Not run: total." in result.output
    assert answer.text == "I will fix the cell." and notebook.ran == ["load"]
    ws.close()


async def test_a_deny_rule_on_delete_stops_deletes_while_inserts_go_ahead(tmp_path):
    ws, model, events = workspace(tmp_path, {"permission": {"notebook_edit": {"*": "ask", "insert": "allow",
                                                                             "delete": "deny"}}})
    script(model, {"tool_calls": [{"name": "notebook_edit", "input": {"action": "delete", "cell_id": "load"}},
                                  {"name": "notebook_edit", "input": {"action": "insert", "source": "x = 1"}}]},
           {"text": "done"})
    await run(ws)
    assert ws.notebook.ids() == ["intro", "load", "plot", "agent", "new1", "total"]
    assert not [e for e in events if e.type == "permission.asked"]
    denied, inserted = results(model)
    assert denied.is_error and "rule which prevents you" in denied.output
    assert not inserted.is_error and "Inserted code cell new1" in inserted.output
    ws.close()


async def test_an_ask_puts_the_cells_diff_in_front_of_the_person(tmp_path):
    ws, model, _ = workspace(tmp_path)
    script(model, {"tool_calls": [{"name": "notebook_edit", "input": {"action": "replace", "cell_id": "total",
                                                                      "source": "total = 0"}}]},
           {"text": "done"})
    asked = []

    def person(event):
        asked.append(event.request)
        asyncio.get_running_loop().call_soon(ws.permissions.reply, event.request.id, "once")

    ws.bus.subscribe("permission.asked", person)
    await run(ws)
    [request] = asked
    assert request.permission == "notebook_edit" and request.patterns == ["replace"]
    assert "-total = sum(rows)" in request.metadata["diff"] and "+total = 0" in request.metadata["diff"]
    assert ws.notebook.get("total").source == "total = 0"
    ws.close()


async def test_in_the_loop_malformed_calls_are_results_the_model_reads(tmp_path):
    ws, model, _ = workspace(tmp_path, {"permission": {"notebook_edit": "allow"}})
    script(model, {"tool_calls": [{"name": "notebook_edit", "input": {"action": "delete"}},
                                  {"name": "notebook_edit", "input": {"action": "insert"}},
                                  {"name": "notebook_edit", "input": {"action": "explode", "cell_id": "load"}},
                                  {"name": "notebook_run", "input": {"cell_ids": "load"}}]},
           {"text": "sorry"})
    answer = await run(ws)
    outputs = [r.output for r in results(model)]
    assert all(r.is_error for r in results(model))
    assert "delete needs `cell_id`" in outputs[0] and "insert needs `source`" in outputs[1]
    assert "Input should be 'insert', 'replace' or 'delete'" in outputs[2]
    assert "invalid arguments" in outputs[3]
    assert answer.text == "sorry" and len(ws.notebook.cells) == 5
    ws.close()


async def test_the_plan_agent_is_not_offered_cell_changes_or_runs_and_its_calls_change_nothing(tmp_path):
    ws, model, _ = workspace(tmp_path)
    script(model, {"tool_calls": [{"name": "notebook_read", "input": {}},
                                  {"name": "notebook_edit", "input": {"action": "delete", "cell_id": "load"}},
                                  {"name": "notebook_run", "input": {"cell_ids": ["load"]}}]},
           {"text": "planned"})
    await run(ws, agent="plan")
    [request] = [r for r in model.requests if r.purpose == "step"][:1]
    offered = {t.name for t in request.tools}
    assert "notebook_read" in offered and not offered & {"notebook_edit", "notebook_run"}
    read, edit, run_ = results(model)
    assert not read.is_error and edit.is_error and run_.is_error
    assert "load" in ws.notebook.ids() and ws.notebook.ran == []
    ws.close()


ALLOW_CELLS = {"notebook_edit": "allow", "notebook_run": "allow"}


@pytest.mark.parametrize(("agent", "config"), [
    ("explore", {}),
    ("data-explorer", {"permission": ALLOW_CELLS, "agent": {"data-explorer": {"permission": ALLOW_CELLS}}}),
])
async def test_read_only_subagents_read_cells_but_never_change_or_run_them(tmp_path, agent, config):
    """data-explorer's denials are fixed: even a configuration that allows cell edits for it does not."""
    ws, model, _ = workspace(tmp_path, config)
    script(model,
           {"tool_calls": [{"name": "task", "input": {"description": "look", "prompt": "look at the notebook",
                                                      "subagent_type": agent}}]},
           {"tool_calls": [{"name": "notebook_read", "input": {"cell_ids": ["load"]}},
                           {"name": "notebook_edit", "input": {"action": "delete", "cell_id": "load"}},
                           {"name": "notebook_run", "input": {"cell_ids": ["load"]}}]},
           {"text": "report"},
           {"text": "done"})
    await run(ws)
    child_request = [r for r in model.requests if r.purpose == "step"][1]
    offered = {t.name for t in child_request.tools}
    assert "notebook_read" in offered and not offered & {"notebook_edit", "notebook_run"}
    child_results = [b for m in [r for r in model.requests if r.purpose == "step"][2].messages
                     for b in m.content if isinstance(b, ToolResultBlock)]
    assert [r.is_error for r in child_results] == [False, True, True]
    assert "load" in ws.notebook.ids() and ws.notebook.ran == []
    ws.close()
