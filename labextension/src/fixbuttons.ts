/**
 * Fix and Explain under a failed cell's error. JupyterLab hands an error output to its renderers as a
 * bundle holding the traceback as `application/vnd.jupyter.stderr` and the error itself as
 * `ERROR_MIME`, which nothing renders by default. This renderer takes `ERROR_MIME` (ranked just before
 * stderr), draws the traceback with JupyterLab's own stderr renderer, so it reads exactly as before, and
 * puts two buttons under it. That way every error output gets them, live or loaded with the notebook,
 * and they go with the output: a rerun without an error clears the outputs and the buttons with them.
 *
 * The buttons show only while a comm reaches the kernel's opencode_nb target (the kernel has it loaded),
 * and only under a cell's own error: not under an error inside a widget of its outputs, and not under one
 * of an `%agent` cell (a failed `%agent fix` offers no fix of the fix). A click inserts a code cell right
 * below, `%agent fix <id>` or `%agent explain <id>` with `{"opencode_nb": {"fix_of": <id>}}`, and runs it
 * the way run_cells does, so the run's card is that cell's output, as for a magic typed by hand.
 */

import { CodeCell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

import { type NotebookView, insertCells } from './cells';
import { isObject } from './params';
import { runCells } from './run';

export const ERROR_MIME = 'application/vnd.jupyter.error';

/** The stderr renderer that draws a traceback ranks 110: this one comes first. */
export const ERROR_RANK = 105;

export const STDERR_MIME = 'application/vnd.jupyter.stderr';

/** The page's link to the kernel, as the buttons need it (NotebookLink). */
export interface FixHost extends NotebookView {
  /** A comm is known to reach the kernel's opencode_nb target. */
  readonly reachesKernel: boolean;
  /** Be told when that changes; returns the way to stop being told. */
  onReach(listener: (reaches: boolean) => void): () => void;
}

type Kind = 'fix' | 'explain';

const TITLES: Readonly<Record<Kind, string>> = {
  fix:
    'Ask the agent to find what caused this error and propose new source for the cell; ' +
    'you accept or reject the change before it lands (runs `%agent fix` in a cell below)',
  explain:
    'Ask the agent to explain what went wrong, why, and what to try; it changes nothing ' +
    '(runs `%agent explain` in a cell below)'
};

const AGENT_SOURCE = /^\s*%%?agent(\s|$)/;

/** A cell whose error the buttons offer to fix: a code cell the person wrote, not one of the agents'. */
export function offersFix(cell: CodeCell): boolean {
  if (AGENT_SOURCE.test(cell.model.sharedModel.getSource())) {
    return false;
  }
  const ours = cell.model.sharedModel.getMetadata().opencode_nb;
  return !(isObject(ours) && ours.fix_of !== undefined);
}

/** Insert `%agent <kind> <id>` below the cell and run it; resolves once that cell has run. */
export async function askAbout(view: NotebookView, cellId: string, kind: Kind): Promise<void> {
  const inserted = insertCells(view, {
    after: cellId,
    cells: [{ cell_type: 'code', source: `%agent ${kind} ${cellId}`, metadata: { opencode_nb: { fix_of: cellId } } }]
  });
  const ids = inserted.ids as string[];
  await runCells(view, { cell_ids: ids }, () => undefined);
}

export class ErrorActions extends Panel implements IRenderMime.IRenderer {
  constructor(
    private readonly text: IRenderMime.IRenderer,
    private readonly host: FixHost,
    private readonly panel: NotebookPanel
  ) {
    super();
    this.addClass('ocnb-error-output');
    // Selectors for an error output (`.jp-OutputArea-output[data-mime-type=…stderr]`) find it as before.
    this.node.dataset.mimeType = STDERR_MIME;
    this.addWidget(text);
    this.bar = new Widget();
    this.bar.addClass('ocnb-fix-bar');
    // Enter and Space on a focused button press it, instead of the notebook's command-mode shortcuts.
    this.bar.node.setAttribute('data-lm-suppress-shortcuts', 'true');
    this.fix = this.button('fix', 'Fix');
    this.explain = this.button('explain', 'Explain');
    this.note = document.createElement('span');
    this.note.className = 'ocnb-fix-note';
    this.note.setAttribute('aria-live', 'polite');
    this.bar.node.append(this.fix, this.explain, this.note);
    this.bar.hide();
    this.addWidget(this.bar);
    this.stopListening = host.onReach(() => this.refresh());
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    await this.text.renderModel(model);
    this.refresh();
  }

  override dispose(): void {
    this.stopListening();
    super.dispose();
  }

  protected override onAfterAttach(msg: Parameters<Widget['onAfterAttach']>[0]): void {
    super.onAfterAttach(msg);
    this.refresh();
  }

  /** The cell whose own output this is; null inside a widget's output, or while not in a notebook. */
  private cell(): CodeCell | null {
    const cell = this.panel.content.widgets.find(w => w.node.contains(this.node));
    if (!(cell instanceof CodeCell) || this.node.parentElement?.closest('.jp-OutputArea') !== cell.outputArea.node) {
      return null;
    }
    return cell;
  }

  private refresh(): void {
    if (this.isDisposed) {
      return;
    }
    const cell = this.cell();
    this.bar.setHidden(!this.host.reachesKernel || cell === null || !offersFix(cell));
  }

  private button(kind: Kind, label: string): HTMLButtonElement {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = `ocnb-fix-button ocnb-${kind}-button`;
    button.textContent = label;
    button.title = TITLES[kind];
    button.onclick = () => void this.ask(kind);
    return button;
  }

  private async ask(kind: Kind): Promise<void> {
    const cell = this.cell();
    if (cell === null || this.fix.disabled) {
      return;
    }
    this.fix.disabled = this.explain.disabled = true;
    this.note.textContent = '';
    try {
      await askAbout(this.host, cell.model.id, kind);
    } catch (error) {
      this.note.textContent = `Could not start ${kind === 'fix' ? 'the fix' : 'the explanation'}: ${
        error instanceof Error ? error.message : String(error)
      }`;
    } finally {
      this.fix.disabled = this.explain.disabled = false;
    }
  }

  private readonly bar: Widget;
  private readonly fix: HTMLButtonElement;
  private readonly explain: HTMLButtonElement;
  private readonly note: HTMLSpanElement;
  private readonly stopListening: () => void;
}
