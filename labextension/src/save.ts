/**
 * Saving the notebook after the agents changed it. Their cells would otherwise live only in the page until
 * the next autosave, and a reload or a closed tab would lose them while the kernel believes they exist.
 *
 * Saves of one notebook go one after another: JupyterLab compares the file's time on disk with the time of
 * its last save, so a second save started before the first has finished finds the file "changed on disk"
 * and asks the person whether to overwrite it. Changes are gathered too: a burst (a plan's cells, an undo)
 * is one save, shortly after the last change.
 *
 * Under real-time collaboration the page holds no copy of its own: its model is the shared document, which
 * the server stores and saves to the file shortly after each change, so a save of ours would only race it.
 */

import type { DocumentRegistry } from '@jupyterlab/docregistry';

import type { NotebookView } from './cells';

export const SAVE_DELAY_MS = 400;

type Context = DocumentRegistry.IContext<DocumentRegistry.IModel>;

const timers = new WeakMap<Context, ReturnType<typeof setTimeout>>();
const inFlight = new WeakMap<Context, Promise<void>>();

/** Save now, after any save of ours still running; rejects when this save fails. */
export function saveInTurn(context: Context): Promise<void> {
  const previous = inFlight.get(context) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => context.save());
  inFlight.set(context, next);
  return next;
}

export function saveSoon(view: NotebookView): void {
  const context = view.panel.context;
  if (context.model.collaborative) {
    return; // the shared document: the server keeps it and writes the file itself, after every change
  }
  const previous = timers.get(context);
  if (previous !== undefined) {
    clearTimeout(previous);
  }
  timers.set(
    context,
    setTimeout(() => {
      timers.delete(context);
      if (context.isDisposed || !context.isReady || context.model.readOnly) {
        return;
      }
      saveInTurn(context).catch((error: unknown) => {
        console.warn('opencode-nb: could not save the notebook after an agent changed it', error);
      });
    }, SAVE_DELAY_MS)
  );
}
