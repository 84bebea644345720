/**
 * The `notify` action: a notification the kernel asks for when what it shows would otherwise go unseen. A
 * page reloaded before the notebook was saved has no cell for a prompt still running, so the kernel shows
 * the run again in a new cell; the notification says what the run waits for and scrolls to that cell.
 */

import { Notification } from '@jupyterlab/apputils';

import { type NotebookView, indexOf, notebookModel } from './cells';
import { type Params, RequestError } from './params';

const KINDS = ['info', 'warning', 'error', 'success'] as const;
type Kind = (typeof KINDS)[number];

function kind(params: Params): Kind {
  const value = params.kind ?? 'info';
  if (typeof value !== 'string' || !(KINDS as readonly string[]).includes(value)) {
    throw new RequestError(`kind must be one of ${KINDS.join(', ')}, not ${JSON.stringify(value)}`);
  }
  return value as Kind;
}

/** Make the cell the active one and bring it into view. */
function showCell(view: NotebookView, cellId: string): void {
  const notebook = view.panel.content;
  const index = indexOf(notebookModel(view), cellId);
  notebook.activeCellIndex = index;
  const cell = notebook.widgets[index];
  if (cell !== undefined) {
    void notebook.scrollToCell(cell, 'start');
  }
}

export function notify(view: NotebookView, params: Params): Record<string, unknown> {
  const message = params.message;
  if (typeof message !== 'string' || message === '') {
    throw new RequestError('message must be a non-empty string');
  }
  const cellId = params.cell_id ?? null;
  if (cellId !== null && typeof cellId !== 'string') {
    throw new RequestError(`cell_id must be a string or null, not ${JSON.stringify(cellId)}`);
  }
  if (cellId !== null) {
    indexOf(notebookModel(view), cellId); // an unknown id is an error before anything shows
  }
  const actions: Notification.IAction[] =
    cellId === null ? [] : [{ label: 'Show the cell', callback: () => showCell(view, cellId), displayType: 'accent' }];
  const id = Notification.emit(message, kind(params), { autoClose: false, actions });
  return { notification: id };
}
