/**
 * run_cells: run cells one after another through the notebook's own execution path, the one Shift+Enter
 * uses (`CodeCell.execute`: outputs appear in the cell, the prompt counts, and the kernel sees the cell's id
 * in the request metadata). It does not move the person's selection or focus.
 */

import { CodeCell, MarkdownCell } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';

import { type NotebookView, indexOf, notebookModel } from './cells';
import { type Params, RequestError, optionalBoolean, stringList } from './params';
import { saveInTurn } from './save';

export interface CellRun {
  id: string;
  status: 'ok' | 'error' | 'aborted';
  execution_count: number | null;
  outputs: nbformat.IOutput[];
}

/** Sends `{event: "cell_done", ...}` to the kernel after each cell. */
export type CellDone = (result: CellRun) => void;

function notRun(id: string): CellRun {
  return { id, status: 'aborted', execution_count: null, outputs: [] };
}

async function runOne(view: NotebookView, id: string): Promise<CellRun> {
  const notebook = view.panel.content;
  const widget = notebook.widgets.find(w => w.model.id === id);
  if (widget === undefined) {
    return notRun(id); // deleted while earlier cells ran
  }
  if (widget instanceof MarkdownCell) {
    widget.rendered = true;
    return { id, status: 'ok', execution_count: null, outputs: [] };
  }
  if (!(widget instanceof CodeCell)) {
    return { id, status: 'ok', execution_count: null, outputs: [] };
  }
  const model = notebookModel(view);
  let status: CellRun['status'];
  try {
    const reply = await CodeCell.execute(widget, view.panel.sessionContext, {
      deletedCells: model.deletedCells,
      recordTiming: notebook.notebookConfig.recordTiming
    });
    model.deletedCells.splice(0, model.deletedCells.length);
    // No reply: an empty cell, which "runs" without the kernel.
    const replied = reply?.content.status ?? 'ok';
    status = replied === 'ok' || replied === 'error' ? replied : 'aborted';
  } catch {
    // The request was cancelled: the kernel restarted or shut down, or the cell went away.
    status = 'aborted';
  }
  if (widget.isDisposed) {
    return notRun(id);
  }
  return { id, status, execution_count: widget.model.executionCount, outputs: widget.model.outputs.toJSON() };
}

async function saveCheckpoint(view: NotebookView, afterId: string, results: CellRun[]): Promise<void> {
  try {
    await saveInTurn(view.panel.context);
    await view.panel.context.createCheckpoint();
  } catch (error) {
    throw new RequestError(`saving the notebook after cell "${afterId}" failed: ${String(error)}`, { results });
  }
}

/**
 * Check the request at once (a bad id or field throws before anything runs), then run in the background.
 * The promise settles when every cell has run or been aborted; it rejects when a checkpoint fails, with the
 * results so far.
 */
export function runCells(view: NotebookView, params: Params, cellDone: CellDone): Promise<Record<string, unknown>> {
  const model = notebookModel(view);
  const ids = stringList(params, 'cell_ids');
  ids.forEach(id => indexOf(model, id));
  const stopOnError = optionalBoolean(params, 'stop_on_error', true);
  const checkpoint = optionalBoolean(params, 'checkpoint', false);
  const session = view.panel.sessionContext;
  const hasCode = ids.some(id => model.cells.get(indexOf(model, id)).type === 'code');
  if (hasCode && (session.hasNoKernel || session.session?.kernel == null)) {
    throw new RequestError('the notebook has no kernel to run code cells');
  }
  if (hasCode && session.pendingInput) {
    throw new RequestError('the notebook is waiting for input (input() or getpass()); answer it first');
  }

  return (async () => {
    const results: CellRun[] = [];
    let stopped = false;
    for (const id of ids) {
      if (stopped) {
        results.push(notRun(id));
        continue;
      }
      const result = await runOne(view, id);
      results.push(result);
      cellDone(result);
      if (checkpoint) {
        await saveCheckpoint(view, id, results);
      }
      stopped = stopOnError && result.status !== 'ok';
    }
    return { results };
  })();
}
