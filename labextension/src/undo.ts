/**
 * The Undo on a finished run's card. When a run ends, the kernel leaves a static transcript in its cell:
 * HTML that reads the same without a kernel, plus `RUN_MIME` naming the run's turn. This renderer draws
 * that HTML exactly as JupyterLab's own HTML renderer does, and under it an Undo bar, filled from what the
 * kernel says about the turn (`undo_state`, see ../PROTOCOL.md). A kernel that does not know the turn (a
 * restarted one, another one, none at all) leaves the bar empty, so a saved notebook reopened later shows
 * the transcript alone: no widget to lose its model, no button that cannot work. Readers without this
 * extension (nbviewer, GitHub) show the HTML. After an undo the bar offers Redo while the kernel can still
 * put back what that undo took (`redoable`).
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

import { isObject } from './params';

export const RUN_MIME = 'application/vnd.opencode-nb.run+json';

/** Cards rank before text/html (50), so a transcript that names its turn is drawn by us. */
export const RUN_RANK = 40;

/** What the kernel says about one turn. */
export interface TurnState {
  state: 'undoable' | 'undone' | 'forgotten' | 'unknown';
  /** What an undo would take back ("1 cell inserted, 1 binding (df2)"), when undoable. */
  summary?: string;
  /** What the undo did, when undone; why it cannot be, when forgotten. */
  report?: string;
  /** When undone: the kernel can still put back what the undo took. */
  redoable?: boolean;
}

/** The page's way to the kernel, per notebook (NotebookLink). */
export interface Turns {
  addCard(card: RunCard): void;
  removeCard(card: RunCard): void;
  ask(action: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export function turnState(value: unknown): TurnState | null {
  if (!isObject(value) || typeof value.state !== 'string') {
    return null;
  }
  const state: TurnState = { state: value.state as TurnState['state'] };
  if (typeof value.summary === 'string') {
    state.summary = value.summary;
  }
  if (typeof value.report === 'string') {
    state.report = value.report;
  }
  if (value.redoable !== undefined && value.redoable !== null && value.redoable !== false) {
    state.redoable = true;
  }
  return state;
}

const NOTE_STYLE =
  'font-size: var(--jp-ui-font-size1); color: var(--jp-ui-font-color2); margin-left: 8px; ' +
  'min-width: 0; flex: 0 1 auto; white-space: pre-line; overflow-wrap: break-word;';

/** A button keeps its whole label: it never shrinks below it, whatever the note beside it says. */
const BUTTON_STYLE = 'flex: none; white-space: nowrap;';

export class RunCard extends Panel implements IRenderMime.IRenderer {
  constructor(
    private readonly html: IRenderMime.IRenderer,
    private readonly turns: Turns
  ) {
    super();
    this.addClass('ocnb-run');
    this.addWidget(html);
    this.bar = new Widget();
    this.bar.addClass('ocnb-undo');
    // Wraps, so a long report moves the buttons to a line of their own instead of squeezing them out of view.
    this.bar.node.style.cssText = 'display: flex; flex-wrap: wrap; align-items: center; gap: 4px 0; margin: 4px 0 2px;';
    this.bar.hide();
    this.addWidget(this.bar);
  }

  /** The turn this card offers to undo: null for an untrusted output, which never changes anything. */
  get turn(): string | null {
    return this._turn;
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    await this.html.renderModel(model);
    const data = model.data[RUN_MIME];
    const turn = isObject(data) && typeof data.turn === 'string' ? data.turn : null;
    this._turn = model.trusted ? turn : null;
    if (this._turn === null) {
      this.turns.removeCard(this);
      this.present(null);
    } else {
      this.turns.addCard(this);
    }
  }

  /** Show what the kernel said about the turn; null (nothing known) leaves only the transcript. */
  present(state: TurnState | null, error?: string): void {
    if (this.busy) {
      return;
    }
    const node = this.bar.node;
    node.replaceChildren();
    if (state === null || state.state === 'unknown') {
      this.bar.hide();
      return;
    }
    if (state.state === 'undoable') {
      const button = document.createElement('button');
      button.className = 'ocnb-undo-button jp-Button jp-mod-styled';
      button.style.cssText = BUTTON_STYLE;
      button.textContent = '↶ Undo this run';
      button.title = 'Take back what this run did to the files, the notebook and the namespace';
      button.onclick = () => void this.act('undo', button);
      node.append(button, this.note(`takes back ${state.summary ?? 'its changes'}`));
    } else if (state.state === 'undone') {
      // The report says what was undone in its own words ("Took back turn 2: restored a.py …").
      node.append(this.note(`↶ ${state.report ?? 'Undone.'}`, 'ocnb-undone'));
      if (state.redoable === true) {
        const button = document.createElement('button');
        button.className = 'ocnb-redo-button jp-Button jp-mod-styled';
        button.style.cssText = BUTTON_STYLE;
        button.style.marginLeft = '8px';
        button.textContent = '↷ Redo';
        button.title = 'Put back what the undo took';
        button.onclick = () => void this.act('redo', button);
        node.append(button);
      }
    } else {
      node.append(this.note(state.report ?? 'This run can no longer be undone.'));
    }
    if (error !== undefined && (state.state === 'undoable' || state.state === 'undone')) {
      node.append(this.note(error, 'ocnb-undo-error'));
    }
    this.bar.show();
  }

  override dispose(): void {
    this.turns.removeCard(this);
    super.dispose();
  }

  private note(text: string, kind = 'ocnb-undo-note'): HTMLElement {
    const span = document.createElement('span');
    span.className = kind;
    span.style.cssText = NOTE_STYLE;
    span.textContent = text;
    return span;
  }

  private async act(action: 'undo' | 'redo', button: HTMLButtonElement): Promise<void> {
    const turn = this._turn;
    if (turn === null || this.busy) {
      return;
    }
    this.busy = true;
    button.disabled = true;
    button.textContent = action === 'undo' ? 'Undoing…' : 'Redoing…';
    const stays = action === 'undo' ? 'undoable' : 'undone';
    let reply: Record<string, unknown>;
    try {
      reply = await this.turns.ask(action, { turn });
    } catch (error) {
      reply = { ok: false, state: stays, error: error instanceof Error ? error.message : String(error) };
    }
    this.busy = false;
    if (this.isDisposed) {
      return;
    }
    const state = turnState(reply) ?? { state: 'unknown' };
    if (reply.ok === true) {
      this.present(state);
    } else {
      const why = typeof reply.error === 'string' ? reply.error : `The kernel could not ${action} this run.`;
      // Refused while the button still applies (a later run comes first): it stays, with the reason under it.
      // Otherwise (already undone, too old, an unknown turn) the reason is all there is to say.
      this.present(state.state === stays ? state : { state: 'forgotten', report: why }, why);
    }
  }

  private readonly bar: Widget;
  private _turn: string | null = null;
  private busy = false;
}
