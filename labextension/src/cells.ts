/**
 * The cell actions that answer at once: read_cells, insert_cells, replace_cell, delete_cells and
 * active_cell. They work on the live notebook model (unsaved edits included) through its shared model, so
 * every change is one undoable step and reaches collaborators like a person's edit.
 */

import type { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';

import {
  type CellType,
  type Params,
  RequestError,
  cellType,
  isObject,
  metadata,
  optionalBoolean,
  optionalCount,
  source,
  stringList
} from './params';

/** A cell as the protocol describes it (exactly these keys: the kernel validates them strictly). */
export interface CellInfo {
  id: string;
  cell_type: CellType;
  source: string;
  metadata: Record<string, unknown>;
  execution_count: number | null;
  outputs: nbformat.IOutput[];
  running: boolean;
}

/** What an action needs to know about the notebook it serves. */
export interface NotebookView {
  readonly panel: NotebookPanel;
  /** The id of the cell the kernel is executing now, if any. */
  runningCell(): string | null;
}

export const DEFAULT_MAX_OUTPUT_CHARS = 2000;

export function notebookModel(view: NotebookView): INotebookModel {
  const model = view.panel.content.model;
  if (model === null) {
    throw new RequestError('the notebook is not loaded yet');
  }
  return model;
}

/** Index of the cell with `id`, or a RequestError naming the id. */
export function indexOf(model: INotebookModel, id: string): number {
  for (let i = 0; i < model.cells.length; i++) {
    if (model.cells.get(i).id === id) {
      return i;
    }
  }
  throw new RequestError(`no cell with id "${id}" in this notebook`);
}

function isRunning(cell: ICellModel): boolean {
  return cell.type === 'code' && (cell as ICodeCellModel).executionState === 'running';
}

/**
 * The cell as the protocol describes it. With `maxOutputChars`, output text is cut and images are
 * replaced by a note of their size; without it, outputs are the model's own.
 */
export function describeCell(cell: ICellModel, maxOutputChars?: number): CellInfo {
  const outputs = cell.type === 'code' ? (cell as ICodeCellModel).outputs.toJSON() : [];
  return {
    id: cell.id,
    cell_type: cell.type as CellType,
    source: cell.sharedModel.getSource(),
    metadata: { ...cell.sharedModel.getMetadata() },
    execution_count: cell.type === 'code' ? (cell as ICodeCellModel).executionCount : null,
    outputs: maxOutputChars === undefined ? outputs : outputs.map(o => summarizeOutput(o, maxOutputChars)),
    running: isRunning(cell)
  };
}

/** Cut `text` to `max` characters, saying how many were left out. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…[${text.length - max} more characters]`;
}

function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.floor((clean.length * 3) / 4) - padding;
}

function joined(value: unknown): string | null {
  if (typeof value === 'string') {
    return value;
  }
  if (Array.isArray(value) && value.every(v => typeof v === 'string')) {
    return value.join('');
  }
  return null;
}

/** An output small enough to hand to a model: long text cut, images as "[image/png: N bytes]". */
export function summarizeOutput(output: nbformat.IOutput, max: number): nbformat.IOutput {
  const copy: Record<string, unknown> = { ...output };
  if (output.output_type === 'stream') {
    copy.text = cut(joined(output.text) ?? '', max);
  } else if (output.output_type === 'error') {
    const traceback = Array.isArray(output.traceback) ? output.traceback.join('\n') : '';
    copy.traceback = cut(traceback, max).split('\n');
  } else if (isObject(output.data)) {
    const data: Record<string, unknown> = {};
    for (const [mime, value] of Object.entries(output.data)) {
      const text = joined(value);
      if (mime.startsWith('image/') && text !== null) {
        const bytes = mime === 'image/svg+xml' ? text.length : base64Bytes(text);
        data[mime] = `[${mime}: ${bytes} bytes]`;
      } else {
        data[mime] = text === null ? value : cut(text, max);
      }
    }
    copy.data = data;
  }
  return copy as nbformat.IOutput;
}

// ---------------------------------------------------------------------------------------------- actions

export function readCells(view: NotebookView, params: Params): Record<string, unknown> {
  const model = notebookModel(view);
  const max = optionalCount(params, 'max_output_chars', DEFAULT_MAX_OUTPUT_CHARS);
  let cells: ICellModel[];
  if (params.cell_ids === undefined || params.cell_ids === null) {
    cells = [...model.cells];
  } else {
    cells = stringList(params, 'cell_ids').map(id => model.cells.get(indexOf(model, id)));
  }
  return {
    path: view.panel.context.path,
    cells: cells.map(cell => describeCell(cell, max)),
    total: model.cells.length,
    active_cell: view.panel.content.activeCell?.model.id ?? null,
    running_cell: view.runningCell()
  };
}

/** A new cell's content as the shared model takes it. */
function newCell(value: unknown, field: string): nbformat.ICell {
  if (!isObject(value)) {
    throw new RequestError(`${field} must be an object with cell_type, source and metadata`);
  }
  const type = value.cell_type === undefined ? 'code' : cellType(value.cell_type, `${field}.cell_type`);
  const cell: Record<string, unknown> = {
    cell_type: type,
    source: value.source === undefined ? '' : source(value.source, `${field}.source`),
    metadata: value.metadata === undefined ? {} : metadata(value.metadata, `${field}.metadata`)
  };
  if (type === 'code') {
    cell.outputs = [];
    cell.execution_count = null;
  }
  return cell as unknown as nbformat.ICell;
}

export function insertCells(view: NotebookView, params: Params): Record<string, unknown> {
  const model = notebookModel(view);
  const after = params.after;
  if (after !== null && after !== undefined && typeof after !== 'string') {
    throw new RequestError('after must be a cell id or null (at the end)');
  }
  if (!Array.isArray(params.cells) || params.cells.length === 0) {
    throw new RequestError('cells must be a non-empty list of {cell_type, source, metadata}');
  }
  const at = params.index;
  if (at !== undefined && at !== null && !(typeof at === 'number' && Number.isInteger(at) && at >= 0)) {
    throw new RequestError(`index must be a whole number from 0, not ${JSON.stringify(at)}`);
  }
  const cells = params.cells.map((c: unknown, i) => newCell(c, `cells[${i}]`));
  let index: number;
  if (typeof at === 'number') {
    index = Math.min(at, model.cells.length);
  } else {
    index = typeof after === 'string' ? indexOf(model, after) + 1 : model.cells.length;
  }
  const inserted = model.sharedModel.insertCells(index, cells);
  return { ids: inserted.map(cell => cell.getId()), index };
}

const REPLACEABLE = ['source', 'cell_type', 'metadata', 'outputs', 'execution_count'] as const;

function outputList(value: unknown): nbformat.IOutput[] {
  const types = ['stream', 'display_data', 'execute_result', 'error'];
  if (!Array.isArray(value)) {
    throw new RequestError('outputs must be a list of nbformat outputs');
  }
  value.forEach((o, i) => {
    if (!isObject(o) || !types.includes(o.output_type as string)) {
      throw new RequestError(`outputs[${i}] must be an nbformat output with output_type one of ${types.join(', ')}`);
    }
  });
  return value as nbformat.IOutput[];
}

function executionCount(value: unknown): number | null {
  if (value === null || (typeof value === 'number' && Number.isInteger(value) && value >= 0)) {
    return value;
  }
  throw new RequestError(`execution_count must be a whole number or null, not ${JSON.stringify(value)}`);
}

export function replaceCell(view: NotebookView, params: Params): Record<string, unknown> {
  const model = notebookModel(view);
  if (typeof params.cell_id !== 'string') {
    throw new RequestError('cell_id must be a cell id (a string)');
  }
  if (!REPLACEABLE.some(field => params[field] !== undefined)) {
    throw new RequestError(`replace_cell needs at least one of ${REPLACEABLE.join(', ')}`);
  }
  const index = indexOf(model, params.cell_id);
  const cell = model.cells.get(index);
  const previous = describeCell(cell);
  const type = params.cell_type === undefined ? previous.cell_type : cellType(params.cell_type, 'cell_type');
  const text = params.source === undefined ? previous.source : source(params.source, 'source');
  const meta = params.metadata === undefined ? previous.metadata : metadata(params.metadata, 'metadata');
  const outputs = params.outputs === undefined ? undefined : outputList(params.outputs);
  const count = params.execution_count === undefined ? undefined : executionCount(params.execution_count);
  // The kernel's own outputs for a cell it ran (a page reloaded mid-run gets them this way) are as
  // trustworthy as those its execution sends; outputs merely put back (an undo) keep the cell's trust.
  const trusted = optionalBoolean(params, 'trusted', false);
  if (type !== 'code' && (outputs !== undefined || (count !== undefined && count !== null))) {
    throw new RequestError(`only code cells have outputs and an execution_count; cell "${cell.id}" is ${type}`);
  }
  if (trusted && outputs === undefined) {
    throw new RequestError('trusted applies to the outputs given: send outputs with it');
  }

  if (type !== previous.cell_type) {
    // A cell's type is fixed in the model: swap in a new cell of the new type under the same id.
    const replacement: Record<string, unknown> = { id: cell.id, cell_type: type, source: text, metadata: meta };
    if (type === 'code') {
      replacement.outputs = outputs ?? [];
      replacement.execution_count = count ?? null;
    }
    model.sharedModel.transact(() => {
      model.sharedModel.deleteCell(index);
      model.sharedModel.insertCell(index, replacement as unknown as nbformat.ICell);
    });
  } else {
    const shared = cell.sharedModel;
    shared.transact(() => {
      if (params.source !== undefined) {
        shared.setSource(text);
      }
      if (params.metadata !== undefined) {
        shared.setMetadata(meta as nbformat.IBaseCellMetadata);
      }
      if (type === 'code') {
        const code = (cell as ICodeCellModel).sharedModel;
        if (outputs !== undefined) {
          code.setOutputs(outputs);
        }
        if (count !== undefined) {
          code.execution_count = count;
        }
      }
    });
  }
  if (trusted) {
    model.cells.get(index).trusted = true; // the cell now at its place: a new one if its type changed
  }
  return { previous };
}

export function deleteCells(view: NotebookView, params: Params): Record<string, unknown> {
  const model = notebookModel(view);
  const ids = stringList(params, 'cell_ids');
  // Check every id before deleting anything: a bad id leaves the notebook as it was.
  const deleted = [...new Set(ids)].map(id => {
    const index = indexOf(model, id);
    return { ...describeCell(model.cells.get(index)), index };
  });
  const indices = deleted.map(d => d.index).sort((a, b) => b - a);
  model.sharedModel.transact(() => {
    for (const index of indices) {
      model.sharedModel.deleteCell(index);
    }
  });
  return { deleted };
}

export function activeCell(view: NotebookView): Record<string, unknown> {
  const notebook = view.panel.content;
  const active = notebook.activeCell;
  return { cell_id: active?.model.id ?? null, index: active ? notebook.activeCellIndex : null };
}
