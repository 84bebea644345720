/**
 * A `%%agent` cell holds a prompt, not Python: show it as markdown. The code cell stays a code cell (the
 * kernel runs it); only its editor's mime type changes. JupyterLab sets every code cell's mime type from
 * the kernel's language, when a cell is created and again whenever the language info changes, so the
 * markdown mime type is re-applied after each such reset and whenever the source changes.
 */

import type { ICellModel } from '@jupyterlab/cells';
import type { CellList, NotebookPanel } from '@jupyterlab/notebook';
import type { IObservableList } from '@jupyterlab/observables';

/** What JupyterLab's markdown cells use: markdown with LaTeX. */
export const AGENT_MIME_TYPE = 'text/x-ipythongfm';

const AGENT_CELL = /^%%agent(\s|$)/;

export function isAgentSource(source: string): boolean {
  return AGENT_CELL.test(source);
}

/** Give `cell` the mime type its source calls for; `codeMimeType` is the notebook's language. */
function apply(cell: ICellModel, codeMimeType: string): void {
  if (cell.isDisposed || cell.type !== 'code') {
    return;
  }
  const wanted = isAgentSource(cell.sharedModel.getSource()) ? AGENT_MIME_TYPE : codeMimeType;
  if (cell.mimeType !== wanted) {
    cell.mimeType = wanted;
  }
}

/** Keep `%%agent` cells of `panel` highlighted as markdown for as long as the panel lives. */
export function highlightAgentCells(panel: NotebookPanel): void {
  const notebook = panel.content;
  const watched = new WeakSet<ICellModel>();

  const watch = (cell: ICellModel): void => {
    if (cell.type !== 'code' || watched.has(cell)) {
      return;
    }
    watched.add(cell);
    cell.sharedModel.changed.connect((_, change) => {
      if (change.sourceChange) {
        apply(cell, notebook.codeMimetype);
      }
    });
    cell.mimeTypeChanged.connect((_, change) => {
      // JupyterLab just reset it to the kernel's language: put markdown back.
      if (change.newValue !== AGENT_MIME_TYPE && isAgentSource(cell.sharedModel.getSource())) {
        cell.mimeType = AGENT_MIME_TYPE;
      }
    });
    apply(cell, notebook.codeMimetype);
  };

  const onCellsChanged = (_: CellList, change: IObservableList.IChangedArgs<ICellModel>): void => {
    if (change.type === 'add' || change.type === 'set') {
      change.newValues.forEach(watch);
    }
  };

  const connect = (): void => {
    const model = notebook.model;
    if (model === null) {
      return;
    }
    model.cells.changed.connect(onCellsChanged);
    for (const cell of model.cells) {
      watch(cell);
    }
  };

  notebook.modelChanged.connect(connect);
  connect();
}
