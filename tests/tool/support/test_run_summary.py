"""What a person reads of a python run: where it ran in their words, what it changed, what it printed and
returned; never the sentences the model reads about "the person's namespace"."""

from opencode_nb.tool.python import WHERE, model_text
from opencode_nb.tool.support.run_summary import run_shown, run_summary
from opencode_nb.values import NOT_CONFINED, CodeError, CodeRun, NamespaceChanges

from ..fakes import RecordingContext


def test_a_live_run_says_it_ran_in_your_namespace_and_what_it_bound(tmp_path):
    run = CodeRun(mode="live", output="3 rows\n", run_id="run_1",
                  changes=NamespaceChanges(created=["df"], rebound=["x"], mutated=["rows"]),
                  result={"text/plain": "   a\n0  1"})
    assert run_summary(run) == ("Ran in your namespace: created df; rebound x; may have changed in place rows, "
                                "which Undo does not restore")
    assert run_shown(run) == "3 rows\n   a\n0  1"
    told = model_text(run, RecordingContext(tmp_path))
    assert WHERE["live"] in told and "%agent undo" in told
    assert WHERE["live"] not in run_summary(run) + run_shown(run)


def test_a_sandboxed_run_says_how_it_was_confined():
    confined = CodeRun(mode="fork", confinement="confined by the OS (bubblewrap)")
    assert run_summary(confined) == ("Ran in a sandbox (a copy-on-write fork of your kernel), confined by the OS "
                                     "(bubblewrap)")
    loose = CodeRun(mode="worker")
    assert run_summary(loose) == ("Ran in a sandbox (a separate process given copies of the variables the code "
                                  "names), isolated at the Python level only; your variables are unchanged")


def test_a_failed_run_names_the_exception_and_a_refused_sandbox_says_it_did_not_run():
    failed = CodeRun(mode="live", error=CodeError(ename="KeyError", evalue="'price'", traceback="..."))
    assert run_summary(failed) == "Ran in your namespace\nKeyError: 'price'"
    refused = CodeRun(mode="fork", error=CodeError(ename=NOT_CONFINED, evalue="no sandbox", traceback=""))
    assert run_summary(refused) == "Not run: no sandbox could confine it"


def test_a_figure_is_shown_as_its_image_not_as_its_repr():
    run = CodeRun(mode="live", displays=[{"image/png": "iVBOR", "text/plain": "<Figure size 640x480 with 1 Axes>"}])
    assert run_shown(run) == ""
