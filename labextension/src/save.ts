/**
 * Saving the notebook after the agents changed it. Their cells would otherwise live only in the page until
 * the next autosave, and a reload or a closed tab would lose them while the kernel believes they exist.
 * Saves are gathered: a burst of changes (a plan's cells, an undo) is one save, shortly after the last.
 */

import type { NotebookView } from './cells';

export const SAVE_DELAY_MS = 400;

const timers = new WeakMap<object, ReturnType<typeof setTimeout>>();

export function saveSoon(view: NotebookView): void {
  const context = view.panel.context;
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
      context.save().catch((error: unknown) => {
        console.warn('opencode-nb: could not save the notebook after an agent changed it', error);
      });
    }, SAVE_DELAY_MS)
  );
}
