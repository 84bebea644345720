/**
 * The status bar reads Busy while a cell runs, even when JupyterLab itself makes a kernel subshell.
 *
 * JupyterLab 4.6 sends comm messages over kernel subshells (`commsOverSubshells: perCommTarget`): the first
 * time the page talks to a comm target it sends a `create_subshell_request` on the control channel, and
 * ipykernel answers every control request with `status: busy`, then `idle`. The kernel connection takes
 * any status message as the kernel's own, so when the first widget of an agent's run (its live view) went
 * up, the bar turned to Idle for the rest of the run while the cell still showed [*] (measured: the idle
 * came 0.1 s into a 2 s run; the execute_request's own idle at its end). Subshell requests say nothing of
 * what the kernel executes. The server's page config lists the message types whose status the kernel
 * connection ignores (`untracked_message_types`); the subshell requests are added to that list.
 */

import { PageConfig } from '@jupyterlab/coreutils';

export const SUBSHELL_REQUESTS = ['create_subshell_request', 'delete_subshell_request', 'list_subshell_request'];

const OPTION = 'untracked_message_types';

/** The listed message types, however the page config holds them (a JSON string, or a list from the server). */
function listed(raw: unknown): string[] {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw || '[]');
    } catch {
      value = [];
    }
  }
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** Leave the status of subshell requests out of the kernel's status (the connection reads this option anew
 * for every status message, so it holds from now on). */
export function untrackSubshellRequests(): void {
  const current = listed(PageConfig.getOption(OPTION));
  const merged = [...new Set([...current, ...SUBSHELL_REQUESTS])];
  PageConfig.setOption(OPTION, JSON.stringify(merged));
}
