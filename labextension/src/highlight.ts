/**
 * A `%%agent` cell holds a prompt, not Python: show it as markdown. The code cell stays a code cell (the
 * kernel runs it); only its editor's mime type changes. JupyterLab sets every code cell's mime type from
 * the kernel's language, when a cell is created and again whenever the language info changes, so the
 * markdown mime type is re-applied after each such reset and whenever the source changes.
 *
 * A prompt is prose: its editor wraps long lines (CodeMirror's `lineWrap`, set on that cell only), where a
 * code cell keeps the notebook's setting. The option is set on the cell widget's editor config, so it holds
 * for a cell whose editor is created later (a windowed notebook renders cells as they scroll into view).
 */

import type { Cell, ICellModel } from '@jupyterlab/cells';
import type { CellList, Notebook, NotebookPanel } from '@jupyterlab/notebook';
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

/** Cell widgets whose editor config already keeps prompts wrapped. */
const keepsWrap = new WeakSet<Cell>();

/**
 * Make `widget` wrap its lines while it holds a prompt, whatever the notebook sets later: JupyterLab hands
 * every cell the notebook's editor config again (at load and on each settings change), which would reset it.
 */
function keepWrapped(widget: Cell): void {
  if (keepsWrap.has(widget)) {
    return;
  }
  keepsWrap.add(widget);
  const update = widget.updateEditorConfig.bind(widget);
  widget.updateEditorConfig = (config: Record<string, unknown>): void => {
    const prompt = !widget.model.isDisposed && isAgentSource(widget.model.sharedModel.getSource());
    update(prompt ? { ...config, lineWrap: true } : config);
  };
}

/** Wrap the lines of `cell`'s editor if it holds a prompt; otherwise use the notebook's code cell setting. */
function wrap(notebook: Notebook, cell: ICellModel): void {
  if (cell.isDisposed || cell.type !== 'code') {
    return;
  }
  const wanted = isAgentSource(cell.sharedModel.getSource()) || Boolean(notebook.editorConfig.code.lineWrap);
  for (const widget of notebook.widgets) {
    if (widget.model === cell) {
      keepWrapped(widget);
      if (Boolean(widget.editorConfig.lineWrap) !== wanted) {
        widget.updateEditorConfig({ lineWrap: wanted });
      }
    }
  }
}

/** Keep `%%agent` cells of `panel` highlighted as markdown, their lines wrapped, for as long as the panel lives. */
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
        wrap(notebook, cell);
      }
    });
    cell.mimeTypeChanged.connect((_, change) => {
      // JupyterLab just reset it to the kernel's language: put markdown back.
      if (change.newValue !== AGENT_MIME_TYPE && isAgentSource(cell.sharedModel.getSource())) {
        cell.mimeType = AGENT_MIME_TYPE;
      }
    });
    apply(cell, notebook.codeMimetype);
    // The notebook makes the cell's widget after telling us of its model: wrap it once that is done.
    requestAnimationFrame(() => wrap(notebook, cell));
  };

  const onCellsChanged = (_: CellList, change: IObservableList.IChangedArgs<ICellModel>): void => {
    if (change.type === 'add' || change.type === 'set') {
      change.newValues.forEach(watch);
    }
  };

  // A cell's widget may come after its model: wrap it again when it is shown.
  notebook.cellInViewportChanged.connect((_, widget) => wrap(notebook, widget.model));

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
