/**
 * Which cell is the kernel executing right now? A cell's own state cannot tell: JupyterLab marks every
 * queued cell as running. So watch the kernel's messages instead: an `execute_request` this page sends
 * carries the cell's id in its metadata, and the kernel reports `busy` and then `idle` for that request.
 */

import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel, KernelMessage, Session } from '@jupyterlab/services';

/** Requests whose `idle` never came (a lost message) are forgotten past this many. */
const MAX_PENDING = 500;

export class RunningCell {
  constructor(private readonly session: ISessionContext) {
    session.kernelChanged.connect(this.onKernelChanged, this);
    this.watch(session.session?.kernel ?? null);
  }

  /** The id of the cell the kernel is executing, or null when it is idle or runs someone else's code. */
  get id(): string | null {
    return this.current;
  }

  dispose(): void {
    this.session.kernelChanged.disconnect(this.onKernelChanged, this);
    this.watch(null);
  }

  private onKernelChanged(_: ISessionContext, change: Session.ISessionConnection.IKernelChangedArgs): void {
    this.watch(change.newValue);
  }

  private watch(kernel: Kernel.IKernelConnection | null): void {
    this.kernel?.anyMessage.disconnect(this.onMessage, this);
    this.kernel?.statusChanged.disconnect(this.onStatus, this);
    this.pending.clear();
    this.current = null;
    this.kernel = kernel;
    kernel?.anyMessage.connect(this.onMessage, this);
    kernel?.statusChanged.connect(this.onStatus, this);
  }

  private onStatus(_: Kernel.IKernelConnection, status: Kernel.Status): void {
    if (status === 'restarting' || status === 'autorestarting' || status === 'dead') {
      this.pending.clear();
      this.current = null;
    }
  }

  private onMessage(_: Kernel.IKernelConnection, args: Kernel.IAnyMessageArgs): void {
    const msg = args.msg;
    if (args.direction === 'send' && msg.header.msg_type === 'execute_request') {
      const cellId = msg.metadata.cellId;
      if (typeof cellId === 'string') {
        this.pending.set(msg.header.msg_id, cellId);
        const oldest = this.pending.keys().next();
        if (this.pending.size > MAX_PENDING && oldest.done !== true) {
          this.pending.delete(oldest.value);
        }
      }
      return;
    }
    if (args.direction !== 'recv' || msg.header.msg_type !== 'status') {
      return;
    }
    const parent = (msg.parent_header as Partial<KernelMessage.IHeader>).msg_id;
    const cellId = parent === undefined ? undefined : this.pending.get(parent);
    if (parent === undefined || cellId === undefined) {
      return;
    }
    const state = (msg as KernelMessage.IStatusMsg).content.execution_state;
    if (state === 'busy') {
      this.current = cellId;
    } else if (state === 'idle') {
      this.pending.delete(parent);
      if (this.current === cellId) {
        this.current = null;
      }
    }
  }

  private kernel: Kernel.IKernelConnection | null = null;
  private current: string | null = null;
  private readonly pending = new Map<string, string>();
}
