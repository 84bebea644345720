/**
 * The `opencode_nb` comm between a notebook's kernel and this page (see ../PROTOCOL.md).
 *
 * Two ways in, because either side may come second: the kernel opens a comm to our target when its
 * extension loads, and we open one to the kernel's target whenever we connect to a kernel (notebook opened,
 * kernel changed or restarted, page reloaded). The latter fails quietly while the kernel has no target.
 * Either comm gets our hello first, then carries requests, each answered once by `request_id`.
 *
 * The message handler must never return a pending promise: JupyterLab awaits it before handling any
 * further kernel message, so a request that waits on the kernel (run_cells) would wait on itself. Long
 * work therefore runs detached and replies when it settles.
 *
 * The page asks the kernel too, for the Undo of finished runs' cards (undo.ts): about their turns, once a
 * comm is known to reach the kernel's target and again after every executed cell (an undo, a later run
 * may have changed the answer), and to undo one; and to decide the pending changes it shows (pending.ts).
 * Whether a comm reaches the target is what the Fix and Explain buttons (fixbuttons.ts) wait for: it
 * means the kernel has opencode_nb loaded. When none does any more, the kernel's pending changes are gone.
 */

import type { ISessionContext } from '@jupyterlab/apputils';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage, Session } from '@jupyterlab/services';
import { type JSONObject, UUID } from '@lumino/coreutils';

import { type NotebookView, activeCell, deleteCells, insertCells, readCells, replaceCell } from './cells';
import type { FixHost } from './fixbuttons';
import { type Params, RequestError, isObject } from './params';
import { notify } from './notify';
import { PendingPanels } from './pending';
import { runCells } from './run';
import { saveSoon } from './save';
import { RunningCell } from './running';
import { type RunCard, type Turns, turnState } from './undo';

export const COMM_TARGET = 'opencode_nb';

type Result = Record<string, unknown>;
type Send = (data: Result) => void;
/** What requests act on: the notebook, and the pending changes shown in it. */
export interface Host extends NotebookView {
  readonly pending: PendingPanels;
  /** This page's id, sent in its hello: the kernel addresses each request to one page (`to`). */
  readonly pageId: string;
}

type Action = (view: Host, params: Params, send: Send, requestId: string) => Result | Promise<Result>;

/** A change the agents made is saved soon after, so a page reload or a closed tab keeps it. */
function saved(action: (view: NotebookView, params: Params) => Result): Action {
  return (view, params) => {
    const result = action(view, params);
    saveSoon(view);
    return result;
  };
}

const ACTIONS: Readonly<Record<string, Action>> = {
  read_cells: readCells,
  insert_cells: saved(insertCells),
  replace_cell: saved(replaceCell),
  delete_cells: saved(deleteCells),
  run_cells: (view, params, send, requestId) =>
    runCells(view, params, result => send({ event: 'cell_done', request_id: requestId, result })),
  active_cell: activeCell,
  notify,
  show_pending: (view, params) => view.pending.show(params)
};

export const CAPABILITIES = Object.keys(ACTIONS);

/** How long the page waits for the kernel to answer one of its own requests. */
const ASK_TIMEOUT_MS = 30_000;

interface Asked {
  comm: Kernel.IComm;
  settle: (reply: Result) => void;
  fail: (error: Error) => void;
}

/** The person signed in to this page, as the server's identity provider names them (`/api/me`). */
export interface Person {
  username: string;
  name: string;
  display_name: string;
}

/** Who we are, for the hello. */
export interface FrontendInfo {
  /** This extension's version (its package.json). */
  version: string;
  /** E.g. "JupyterLab 4.6.6" or "Jupyter Notebook 7.5.0". */
  frontend: string;
  /** The person using this page, once the server said; null before that or where it has no identity. */
  person: () => Person | null;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Answer one request on `send`. Returns nothing, ever: an action that needs time replies from its promise.
 *
 * A comm the kernel opened reaches every page connected to the kernel (two people on one notebook under
 * real-time collaboration, or two tabs): each request names the page that is to answer it, and the others
 * stay silent, so a change is made once and reaches the other pages through the shared document.
 */
export function dispatch(view: Host, data: unknown, send: Send): void {
  if (!isObject(data) || (data.action === undefined && data.request_id === undefined)) {
    return; // a hello or an event, not a request
  }
  if (typeof data.to === 'string' && data.to !== view.pageId) {
    return; // another page's request
  }
  const requestId = data.request_id;
  if (typeof requestId !== 'string' || requestId === '') {
    send({ reply_to: null, ok: false, error: 'request_id must be a non-empty string' });
    return;
  }
  const fail = (error: unknown): void => {
    const details = error instanceof RequestError ? error.details : {};
    if (!(error instanceof RequestError)) {
      console.error(`opencode-nb: ${String(data.action)} failed`, error);
    }
    send({ ...details, reply_to: requestId, ok: false, error: errorText(error) });
  };
  const action = typeof data.action === 'string' ? ACTIONS[data.action] : undefined;
  if (action === undefined) {
    fail(new RequestError(`unknown action ${JSON.stringify(data.action)}; known: ${CAPABILITIES.join(', ')}`));
    return;
  }
  let result: Result | Promise<Result>;
  try {
    result = action(view, data, send, requestId);
  } catch (error) {
    fail(error);
    return;
  }
  if (result instanceof Promise) {
    result.then(value => send({ ...value, reply_to: requestId, ok: true }), fail);
  } else {
    send({ ...result, reply_to: requestId, ok: true });
  }
}

/**
 * The link between one notebook and its kernel. One per document context: several views of a notebook
 * share a kernel connection, and a second link would register the target twice.
 */
export class NotebookLink implements Host, Turns, FixHost {
  constructor(
    panel: NotebookPanel,
    private readonly info: FrontendInfo
  ) {
    this.panels = [panel];
    this.session = panel.sessionContext;
    this.running = new RunningCell(this.session);
    this.session.kernelChanged.connect(this.onKernelChanged, this);
    this.session.ready
      .then(() => this.connect(this.session.session?.kernel ?? null))
      .catch((error: unknown) => console.debug('opencode-nb: the notebook closed before its kernel was ready', error));
  }

  /** The view requests act on: the one the person looks at, else the first still open. */
  get panel(): NotebookPanel {
    const panel = this.panels.find(p => p.isVisible) ?? this.panels[0];
    if (panel === undefined) {
      throw new RequestError('the notebook was closed');
    }
    return panel;
  }

  get isDisposed(): boolean {
    return this.panels.length === 0;
  }

  runningCell(): string | null {
    return this.running.id;
  }

  /** The pending changes the kernel asked to show (`show_pending`). */
  readonly pending = new PendingPanels(this);

  readonly pageId = UUID.uuid4();

  /** Say the hello again on every comm the kernel took: what it says (the person) became known. */
  greetAgain(): void {
    const hello = this.hello();
    for (const comm of this.ready) {
      this.quietly(() => comm.send(hello as JSONObject));
    }
  }

  /** A comm is known to reach the kernel's target: opencode_nb is loaded there. */
  get reachesKernel(): boolean {
    return this.ready.size > 0;
  }

  onReach(listener: (reaches: boolean) => void): () => void {
    this.reachListeners.add(listener);
    return () => this.reachListeners.delete(listener);
  }

  /** Tell the listeners when the kernel came within reach or went out of it; its pending changes go with it. */
  private reachMayHaveChanged(): void {
    const reaches = this.reachesKernel;
    if (reaches === this.reachedBefore) {
      return;
    }
    this.reachedBefore = reaches;
    if (!reaches) {
      this.pending.clear();
    }
    for (const listener of [...this.reachListeners]) {
      try {
        listener(reaches);
      } catch (error) {
        console.error('opencode-nb: a listener to the kernel connection failed', error);
      }
    }
  }

  // -------------------------------------------------------------------------------- asking the kernel

  /**
   * Ask the kernel (PROTOCOL.md, requests from the page); fails at once when no comm reaches it yet, and
   * after `timeoutMs` without an answer (null: only when the comm closes).
   */
  ask(action: string, params: Record<string, unknown>, timeoutMs: number | null = ASK_TIMEOUT_MS): Promise<Result> {
    const comm = [...this.ready].pop();
    if (comm === undefined) {
      return Promise.reject(new Error('opencode_nb is not loaded in this kernel'));
    }
    return new Promise<Result>((resolve, reject) => {
      const requestId = `page_${UUID.uuid4()}`;
      const timer =
        timeoutMs === null
          ? null
          : setTimeout(() => {
              this.asked.delete(requestId);
              reject(new Error(`the kernel did not answer ${action} in time`));
            }, timeoutMs);
      const done = (): void => {
        if (timer !== null) {
          clearTimeout(timer);
        }
        this.asked.delete(requestId);
      };
      this.asked.set(requestId, {
        comm,
        settle: reply => {
          done();
          resolve(reply);
        },
        fail: error => {
          done();
          reject(error);
        }
      });
      this.quietly(() => comm.send({ ...params, request_id: requestId, action }));
    });
  }

  addCard(card: RunCard): void {
    this.cards.add(card);
    this.refreshSoon();
  }

  removeCard(card: RunCard): void {
    this.cards.delete(card);
  }

  /** Ask about every card's turn in one request, a moment after the last reason to. */
  private refreshSoon(): void {
    if (this.refreshTimer !== null) {
      return;
    }
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      void this.refreshCards();
    }, 50);
  }

  private async refreshCards(): Promise<void> {
    const turns = [...new Set([...this.cards].map(card => card.turn))].filter(turn => turn !== null);
    if (turns.length === 0 || this.ready.size === 0) {
      return;
    }
    let states: Record<string, unknown>;
    try {
      const reply = await this.ask('undo_state', { turns });
      states = isObject(reply.states) ? reply.states : {};
    } catch (error) {
      console.debug('opencode-nb: the kernel did not say what its runs can undo', error);
      return;
    }
    for (const card of this.cards) {
      if (card.turn !== null) {
        card.present(turnState(states[card.turn]));
      }
    }
  }

  /** The kernel went away (restart, another kernel): its turns are gone with it. */
  private forgetTurns(): void {
    for (const card of this.cards) {
      card.present(null);
    }
  }

  /** After each executed cell (an `%agent undo`, a later run), what the cards offer may have changed. */
  private onIOPub(_: Kernel.IKernelConnection, msg: KernelMessage.IIOPubMessage): void {
    if (
      msg.header.msg_type === 'status' &&
      (msg as KernelMessage.IStatusMsg).content.execution_state === 'idle' &&
      msg.parent_header.msg_type === 'execute_request'
    ) {
      this.refreshSoon();
    }
  }

  /** A comm the kernel's target took: requests can go there now. */
  private reached(comm: Kernel.IComm): void {
    if (this.comms.has(comm)) {
      this.ready.add(comm);
      this.refreshSoon();
      this.reachMayHaveChanged();
    }
  }

  /** Another view of the same notebook. */
  addPanel(panel: NotebookPanel): void {
    this.panels.push(panel);
  }

  /** A view closed; the last one closes the link (and tells the kernel, which may outlive the page). */
  removePanel(panel: NotebookPanel): void {
    this.panels = this.panels.filter(p => p !== panel);
    if (this.panels.length === 0) {
      this.session.kernelChanged.disconnect(this.onKernelChanged, this);
      this.running.dispose();
      this.connect(null);
    }
  }

  private hello(): Result {
    return {
      hello: 'jupyterlab',
      version: this.info.version,
      capabilities: CAPABILITIES,
      path: this.panel.context.path,
      frontend: this.info.frontend,
      page: this.pageId,
      collaborative: this.panel.context.model.collaborative,
      user: this.info.person()
    };
  }

  private onKernelChanged(_: ISessionContext, change: Session.ISessionConnection.IKernelChangedArgs): void {
    this.connect(change.newValue);
  }

  /** Leave the previous kernel and, given one, register our target on it and open our comm. */
  private connect(kernel: Kernel.IKernelConnection | null): void {
    if (this.kernel === kernel && kernel !== null) {
      return;
    }
    if (this.kernel !== null && !this.kernel.isDisposed) {
      this.kernel.removeCommTarget(COMM_TARGET, this.onCommOpen);
      this.kernel.statusChanged.disconnect(this.onStatus, this);
      this.kernel.iopubMessage.disconnect(this.onIOPub, this);
      for (const comm of this.comms) {
        this.quietly(() => comm.close());
      }
    }
    this.forgetComms();
    this.forgetTurns();
    this.kernel = kernel;
    if (kernel === null || this.isDisposed) {
      return;
    }
    kernel.registerCommTarget(COMM_TARGET, this.onCommOpen);
    kernel.statusChanged.connect(this.onStatus, this);
    kernel.iopubMessage.connect(this.onIOPub, this);
    this.openComm(kernel);
  }

  /** After a restart the kernel is new: its target (if its IPython config loads opencode_nb) is too. */
  private onStatus(kernel: Kernel.IKernelConnection, status: Kernel.Status): void {
    if (status === 'restarting' || status === 'autorestarting') {
      this.forgetComms(); // JupyterLab disposes a kernel's comms when it restarts
      this.forgetTurns();
      this.restarted = true;
    } else if (status === 'idle' && this.restarted) {
      this.restarted = false;
      this.openComm(kernel);
    }
  }

  /** Open a comm to the kernel's target; a kernel without one closes it at once, which is fine. */
  private openComm(kernel: Kernel.IKernelConnection): void {
    try {
      const comm = kernel.createComm(COMM_TARGET);
      this.attach(comm);
      const hello = this.hello();
      // The hello rides on the open too, so a target handler sees it without waiting for a message.
      void comm
        .open(hello as JSONObject)
        .done.then(() => {
          if (!comm.isDisposed) {
            this.quietly(() => comm.send(hello as JSONObject));
            this.reached(comm); // a kernel without the target closed it already
          }
        })
        .catch(() => this.comms.delete(comm));
    } catch (error) {
      console.debug('opencode-nb: could not open a comm to the kernel', error);
    }
  }

  /** The kernel opened a comm to us: answer with the hello. Kept as a field so it can be unregistered. */
  private readonly onCommOpen = (comm: Kernel.IComm): void => {
    this.attach(comm);
    this.quietly(() => comm.send(this.hello() as JSONObject));
    this.reached(comm);
  };

  private attach(comm: Kernel.IComm): void {
    this.comms.add(comm);
    const send: Send = data => this.quietly(() => comm.send(data as JSONObject));
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg): void => {
      const data = msg.content.data;
      const asked = typeof data.reply_to === 'string' ? this.asked.get(data.reply_to) : undefined;
      if (asked !== undefined) {
        asked.settle(data);
        return;
      }
      // A message from the kernel proves its target took the comm, even before our open is acknowledged: a
      // kernel busy with a running prompt (the page reloaded mid-run) acknowledges it only once that ends.
      if (!this.ready.has(comm)) {
        this.reached(comm);
      }
      dispatch(this, data, send);
    };
    comm.onClose = (): void => {
      this.forgetComm(comm);
    };
  }

  private forgetComm(comm: Kernel.IComm): void {
    this.comms.delete(comm);
    this.ready.delete(comm);
    this.reachMayHaveChanged();
    for (const asked of [...this.asked.values()]) {
      if (asked.comm === comm) {
        asked.fail(new Error('the kernel closed the connection before it answered'));
      }
    }
  }

  private forgetComms(): void {
    for (const comm of [...this.comms]) {
      this.forgetComm(comm);
    }
  }

  /** Sending to a kernel that went away throws; there is nobody left to tell. */
  private quietly(send: () => unknown): void {
    try {
      send();
    } catch (error) {
      console.debug('opencode-nb: the kernel is gone', error);
    }
  }

  private panels: NotebookPanel[];
  private readonly session: ISessionContext;
  private readonly running: RunningCell;
  private readonly comms = new Set<Kernel.IComm>();
  /** Comms the kernel's target took (it opened them, or took our open): ordered oldest first. */
  private readonly ready = new Set<Kernel.IComm>();
  private readonly asked = new Map<string, Asked>();
  private readonly cards = new Set<RunCard>();
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly reachListeners = new Set<(reaches: boolean) => void>();
  private reachedBefore = false;
  private kernel: Kernel.IKernelConnection | null = null;
  private restarted = false;
}
