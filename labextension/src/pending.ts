/**
 * Pending changes shown in place (`show_pending`, see ../PROTOCOL.md). When an agent proposes new source
 * for a cell instead of writing it, the kernel keeps the proposal and sends the page the notebook's
 * changes; each pending one gets a panel where it would land: for a replace or a delete inside the target
 * cell, between its input and its outputs; for an insert at the foot of the cell it would follow. A panel
 * shows the diff and asks Accept / Reject (and "Accept all" while more than one is pending), with
 * "Run the cell after accepting" ticked. The page never changes a cell itself: it sends `decide_pending`,
 * the kernel applies an accepted change as it applies any agent's edit, and says what it did in one
 * sentence, which stays where the panel was until dismissed.
 *
 * Panels are widgets in the cells' layouts, not outputs, so the saved notebook never holds them. They are
 * put back when the notebook's cells change (a cell replaced by one of another type is a new widget), and
 * all go when the kernel does: a new comm hears the kernel's list again.
 */

import { Notification } from '@jupyterlab/apputils';
import type { Cell } from '@jupyterlab/cells';
import type { CellList } from '@jupyterlab/notebook';
import type { PanelLayout } from '@lumino/widgets';
import { Widget } from '@lumino/widgets';

import type { NotebookView } from './cells';
import { type Params, RequestError, isObject } from './params';

const ACTIONS = ['insert', 'replace', 'delete'] as const;

/** One change, as the kernel describes it. */
export interface PendingChange {
  n: number;
  /** The cell a replace or a delete changes; an insert's is null until it is accepted. */
  cell_id: string | null;
  action: (typeof ACTIONS)[number];
  /** For an insert: the cell the new one follows (null: at the end). */
  after: string | null;
  cell_type: string;
  old_source: string;
  new_source: string;
  diff: string;
  state: string;
  /** The latest sentence about it for a person, e.g. why accepting it did not apply it. */
  said: string;
}

/** What a decision the kernel made reads like. `conflict` (the cell was edited since the proposal) and
 * `failed` leave the change pending; `accepted`, `rejected` and `gone` end it. */
export interface Decision {
  n: number;
  state: string;
  said: string;
}

const DECIDED = ['accepted', 'rejected', 'gone'];

/** The page's way to the kernel, per notebook (NotebookLink). */
export interface PendingHost extends NotebookView {
  ask(action: string, params: Record<string, unknown>, timeoutMs?: number | null): Promise<Record<string, unknown>>;
}

function text(value: unknown, field: string, fallback?: string): string {
  if (typeof value === 'string') {
    return value;
  }
  if ((value === undefined || value === null) && fallback !== undefined) {
    return fallback;
  }
  throw new RequestError(`${field} must be a string, not ${JSON.stringify(value)}`);
}

export function pendingChange(value: unknown, field: string): PendingChange {
  if (!isObject(value)) {
    throw new RequestError(`${field} must be an object describing a change`);
  }
  const n = value.n;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
    throw new RequestError(`${field}.n must be a whole number from 1, not ${JSON.stringify(n)}`);
  }
  const action = value.action;
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
    throw new RequestError(`${field}.action must be one of ${ACTIONS.join(', ')}, not ${JSON.stringify(action)}`);
  }
  const after = value.after ?? null;
  if (after !== null && typeof after !== 'string') {
    throw new RequestError(`${field}.after must be a cell id or null`);
  }
  return {
    n,
    cell_id: action === 'insert' && (value.cell_id ?? null) === null ? null : text(value.cell_id, `${field}.cell_id`),
    action: action as PendingChange['action'],
    after,
    cell_type: text(value.cell_type, `${field}.cell_type`, 'code'),
    old_source: text(value.old_source, `${field}.old_source`, ''),
    new_source: text(value.new_source, `${field}.new_source`, ''),
    diff: text(value.diff, `${field}.diff`, ''),
    state: text(value.state, `${field}.state`),
    said: text(value.said, `${field}.said`, '')
  };
}

export function decisions(reply: Record<string, unknown>): Decision[] {
  const list = Array.isArray(reply.decisions) ? (reply.decisions as unknown[]) : [];
  return list.filter(isObject).flatMap(d =>
    typeof d.n === 'number' && typeof d.state === 'string'
      ? [{ n: d.n, state: d.state, said: typeof d.said === 'string' ? d.said : '' }]
      : []
  );
}

/** The kernel sends its list again after every proposal and decision: a panel already shown stays as it is
 * (its focus, its checkbox) unless its change is another now. */
function sameChange(a: PendingChange, b: PendingChange): boolean {
  return (Object.keys(a) as (keyof PendingChange)[]).every(key => a[key] === b[key]);
}

/** The lines a panel shows: the diff's hunks, or the whole source as added (an insert) or removed (a delete). */
export function diffLines(change: PendingChange): string[] {
  const hunks = change.diff
    .split('\n')
    .filter(line => !line.startsWith('--- ') && !line.startsWith('+++ ') && !line.startsWith('\\ '))
    .filter((line, i, all) => line !== '' || i < all.length - 1);
  if (hunks.length > 0) {
    return hunks;
  }
  const [sign, source] = change.action === 'delete' ? ['-', change.old_source] : ['+', change.new_source];
  return source.split('\n').map(line => sign + line);
}

const HEADINGS: Readonly<Record<PendingChange['action'], (change: PendingChange) => string>> = {
  replace: change => `Proposed change ${change.n}: new source for this cell`,
  delete: change => `Proposed change ${change.n}: delete this cell`,
  insert: change => `Proposed change ${change.n}: a new ${change.cell_type} cell below this one`
};

function lineClass(line: string): string {
  if (line.startsWith('@@')) {
    return 'ocnb-diff-hunk';
  }
  if (line.startsWith('+')) {
    return 'ocnb-diff-added';
  }
  if (line.startsWith('-')) {
    return 'ocnb-diff-removed';
  }
  return 'ocnb-diff-context';
}

function button(label: string, className: string, title: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `ocnb-pending-button ${className}`;
  b.textContent = label;
  b.title = title;
  return b;
}

/** The panel of one pending change: its diff and the person's choices. */
class PendingPanel extends Widget {
  constructor(
    readonly change: PendingChange,
    private readonly decide: (n: number | null, accept: boolean, rerun: boolean, force?: boolean) => void
  ) {
    super();
    this.addClass('ocnb-pending');
    this.addClass(`ocnb-pending-${change.action}`);
    this.node.dataset.pending = String(change.n);
    this.node.setAttribute('role', 'group');
    this.node.setAttribute('aria-label', HEADINGS[change.action](change));
    // Enter and Space press the focused button instead of running the notebook's command-mode shortcuts.
    this.node.setAttribute('data-lm-suppress-shortcuts', 'true');

    const heading = document.createElement('div');
    heading.className = 'ocnb-pending-heading';
    heading.textContent = HEADINGS[change.action](change);

    const diff = document.createElement('pre');
    diff.className = 'ocnb-diff';
    for (const line of diffLines(change)) {
      const row = document.createElement('span');
      row.className = `ocnb-diff-line ${lineClass(line)}`;
      row.textContent = line === '' ? ' ' : line;
      diff.append(row);
    }

    const bar = document.createElement('div');
    bar.className = 'ocnb-pending-bar';
    const what = change.action === 'delete' ? 'delete this cell' : change.action === 'insert' ? 'insert the cell' : 'replace the source';
    this.accept = button('Accept', 'ocnb-accept-button', `Accept change ${change.n}: ${what}`);
    this.reject = button('Reject', 'ocnb-reject-button', `Reject change ${change.n}: the notebook stays as it is`);
    this.acceptAll = button('Accept all', 'ocnb-accept-all-button', 'Accept every pending change of this notebook');
    this.anyway = button('Accept anyway', 'ocnb-accept-anyway-button',
      `Accept change ${change.n} over the edits made to the cell since it was proposed`);
    this.anyway.hidden = true;
    this.rerun = document.createElement('input');
    this.rerun.type = 'checkbox';
    this.rerun.checked = true;
    this.rerun.className = 'ocnb-rerun';
    const label = document.createElement('label');
    label.className = 'ocnb-rerun-label';
    label.append(this.rerun, ' Run the cell after accepting');
    label.hidden = change.action === 'delete';
    this.note = document.createElement('span');
    this.note.className = 'ocnb-pending-note';
    this.note.setAttribute('aria-live', 'polite');
    this.accept.onclick = () => this.decide(change.n, true, this.rerun.checked);
    this.reject.onclick = () => this.decide(change.n, false, false);
    this.acceptAll.onclick = () => this.decide(null, true, this.rerun.checked);
    this.anyway.onclick = () => this.decide(change.n, true, this.rerun.checked, true);
    this.note.textContent = change.said;
    bar.append(this.accept, this.anyway, this.reject, this.acceptAll, label, this.note);
    this.node.append(heading, diff, bar);
  }

  /** "Accept all (k)" while k > 1 changes are pending. */
  count(pending: number): void {
    this.acceptAll.hidden = pending < 2;
    this.acceptAll.textContent = `Accept all (${pending})`;
  }

  set busy(value: boolean) {
    for (const control of [this.accept, this.anyway, this.reject, this.acceptAll, this.rerun]) {
      control.disabled = value;
    }
    if (value) {
      this.note.textContent = 'Waiting for the kernel…';
    }
  }

  /** What the kernel said; after a conflict, the choice to accept over the person's edit. */
  say(text: string, conflict = false): void {
    this.note.textContent = text;
    this.anyway.hidden = !conflict;
  }

  private readonly accept: HTMLButtonElement;
  private readonly anyway: HTMLButtonElement;
  private readonly reject: HTMLButtonElement;
  private readonly acceptAll: HTMLButtonElement;
  private readonly rerun: HTMLInputElement;
  private readonly note: HTMLSpanElement;
}

/** What the kernel said about a decided change, where its panel was, until dismissed. */
class DecidedNote extends Widget {
  constructor(said: string, accepted: boolean) {
    super();
    this.addClass('ocnb-decided');
    this.addClass(accepted ? 'ocnb-decided-accepted' : 'ocnb-decided-rejected');
    this.node.setAttribute('data-lm-suppress-shortcuts', 'true');
    const text = document.createElement('span');
    text.className = 'ocnb-decided-text';
    text.setAttribute('role', 'status');
    text.textContent = `${accepted ? '✓' : '✗'} ${said}`;
    const dismiss = button('Dismiss', 'ocnb-dismiss-button', 'Hide this note');
    dismiss.onclick = () => this.dispose();
    this.node.append(text, dismiss);
  }
}

/**
 * Take `widget` out of its cell (and `remove`: for good). A code cell scrolled out of a windowed notebook keeps its widgets but takes
 * their nodes out of its own (CodeCellLayout), and Lumino would then fail to remove the node: put it back first.
 */
function detach(widget: Widget): void {
  const parent = widget.parent;
  if (parent !== null && widget.node.parentNode !== parent.node) {
    parent.node.appendChild(widget.node);
  }
  widget.parent = null;
}

function remove(widget: Widget): void {
  detach(widget);
  widget.dispose();
}

/** Every pending change of one notebook, and the panels that show them. */
export class PendingPanels {
  constructor(private readonly host: PendingHost) {}

  /** The `show_pending` action: take the kernel's list and show what is pending. */
  show(params: Params): Record<string, unknown> {
    if (!Array.isArray(params.changes)) {
      throw new RequestError('changes must be a list of changes');
    }
    const changes = params.changes.map((c: unknown, i) => pendingChange(c, `changes[${i}]`));
    for (const change of changes) {
      if (change.state === 'pending') {
        this.changes.set(change.n, change);
      } else {
        this.changes.delete(change.n);
      }
    }
    this.render();
    return { shown: [...this.panels.keys()] };
  }

  /** The kernel went away: so did its changes. */
  clear(): void {
    this.changes.clear();
    this.render();
  }

  /** Put every pending change's panel in its cell, take away the rest. */
  private render(): void {
    this.watchCells();
    for (const [n, panel] of [...this.panels]) {
      const change = this.changes.get(n);
      if (change === undefined || !sameChange(change, panel.change)) {
        remove(panel);
        this.panels.delete(n);
      }
    }
    const pending = this.changes.size;
    for (const change of [...this.changes.values()].sort((a, b) => a.n - b.n)) {
      let panel = this.panels.get(change.n);
      if (panel === undefined) {
        panel = new PendingPanel(change, (n, accept, rerun, force) => void this.decide(n, accept, rerun, force));
        this.panels.set(change.n, panel);
      }
      panel.count(pending);
      this.place(panel, change);
    }
  }

  private cellWidget(id: string | null): Cell | undefined {
    let notebook;
    try {
      notebook = this.host.panel.content;
    } catch {
      return undefined; // the notebook closed
    }
    if (id === null) {
      return notebook.widgets[notebook.widgets.length - 1];
    }
    return notebook.widgets.find(w => w.model.id === id);
  }

  /** Where a change lands: a replace or a delete in its cell, under the input; an insert at the foot of the
   * cell it follows. */
  private place(widget: Widget, change: PendingChange): void {
    const cell = this.cellWidget(change.action === 'insert' ? change.after : change.cell_id);
    if (cell === undefined || cell.isDisposed) {
      detach(widget); // not in this notebook (any more): nothing to show it in
      return;
    }
    if (cell.isPlaceholder()) {
      void cell.ready.then(() => this.render());
      return;
    }
    if (!cell.isAttached) {
      return; // scrolled out of a windowed notebook: placed when it is back (cellInViewportChanged)
    }
    const layout = cell.layout as PanelLayout;
    const widgets = [...layout.widgets];
    if (widget.parent === cell && widgets.includes(widget)) {
      return;
    }
    let at: number;
    if (change.action === 'insert') {
      const footer = widgets.findIndex(w => w.hasClass('jp-CellFooter'));
      at = footer === -1 ? widgets.length : footer;
    } else {
      const input = widgets.findIndex(w => w.hasClass('jp-Cell-inputWrapper'));
      at = input === -1 ? widgets.length : input + 1;
    }
    layout.insertWidget(at, widget);
  }

  private watchCells(): void {
    let cells: CellList | undefined;
    try {
      cells = this.host.panel.content.model?.cells;
    } catch {
      return;
    }
    if (cells === undefined || cells === this.watched) {
      return;
    }
    this.watched?.changed.disconnect(this.onCellsChanged, this);
    this.watched = cells;
    cells.changed.connect(this.onCellsChanged, this);
    this.host.panel.content.cellInViewportChanged.connect(this.onCellsChanged, this);
  }

  /** A cell came or went: its widget may be new. Wait a frame, for the notebook to make it. */
  private onCellsChanged(): void {
    if (this.changes.size > 0 && !this.redraw) {
      this.redraw = true;
      requestAnimationFrame(() => {
        this.redraw = false;
        this.render();
      });
    }
  }

  private async decide(n: number | null, accept: boolean, rerun: boolean, force = false): Promise<void> {
    const asked = n === null ? [...this.panels.values()] : [this.panels.get(n)].filter(p => p !== undefined);
    const targets = new Map(asked.map(panel => [panel.change.n, panel.change]));
    asked.forEach(panel => (panel.busy = true));
    let reply: Record<string, unknown>;
    try {
      // No time limit: the kernel answers once the accepted cells have run, which takes as long as they do.
      const params = force ? { n, accept, rerun, force } : { n, accept, rerun };
      reply = await this.host.ask('decide_pending', params, null);
    } catch (error) {
      reply = { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    asked.forEach(panel => (panel.busy = false));
    if (reply.ok !== true) {
      const why = typeof reply.error === 'string' ? reply.error : 'The kernel did not decide the change.';
      asked.forEach(panel => panel.say(why));
      return;
    }
    for (const decision of decisions(reply)) {
      const change = targets.get(decision.n) ?? this.changes.get(decision.n);
      if (!DECIDED.includes(decision.state)) {
        // Not applied (the cell was edited since, the notebook refused): say why, and ask again.
        this.panels.get(decision.n)?.say(decision.said, decision.state === 'conflict');
        continue;
      }
      this.changes.delete(decision.n);
      if (change !== undefined && decision.said !== '') {
        this.tell(change, decision);
      }
    }
    this.render();
  }

  /** Leave the kernel's sentence where the panel was; a deleted cell leaves nowhere, so it is a toast. */
  private tell(change: PendingChange, decision: Decision): void {
    const accepted = decision.state === 'accepted';
    const cell = change.action === 'delete' && accepted ? undefined : this.cellWidget(
      change.action === 'insert' ? change.after : change.cell_id);
    if (cell === undefined || cell.isPlaceholder()) {
      Notification.emit(decision.said, accepted ? 'success' : 'info', { autoClose: 8000 });
      return;
    }
    this.place(new DecidedNote(decision.said, accepted), change);
  }

  private readonly changes = new Map<number, PendingChange>();
  private readonly panels = new Map<number, PendingPanel>();
  private watched: CellList | null = null;
  private redraw = false;
}
