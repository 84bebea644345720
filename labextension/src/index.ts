/**
 * opencode-nb: lets the agents of a notebook's kernel read, edit and run its cells (the `opencode_nb`
 * comm, see ../PROTOCOL.md), shows `%%agent` cells as the markdown prompts they are, draws a finished
 * run's card with the Undo of that run, offers Fix and Explain under a failed cell's error, shows the
 * agents' pending cell changes in place to accept or reject, and keeps the status bar Busy while a cell runs.
 */

import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';
import type { DocumentRegistry } from '@jupyterlab/docregistry';

import { NotebookLink, type Person } from './comm';
import { ERROR_MIME, ERROR_RANK, ErrorActions, STDERR_MIME } from './fixbuttons';
import { highlightAgentCells } from './highlight';
import { untrackSubshellRequests } from './status';
import { RUN_MIME, RUN_RANK, RunCard } from './undo';
import { VERSION } from './version';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'opencode-nb:plugin',
  description: 'Lets opencode_nb agents read, edit and run cells of the live notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    const people = app.serviceManager.user;
    const person = (): Person | null => {
      const identity = people.identity;
      return identity ? { username: identity.username, name: identity.name, display_name: identity.display_name } : null;
    };
    const info = { version: VERSION, frontend: `${app.name} ${app.version}`, person };
    untrackSubshellRequests();
    // One link per document: views of the same notebook share its kernel connection.
    const links = new Map<DocumentRegistry.Context, NotebookLink>();
    const tracked = new WeakSet<NotebookPanel>();

    const track = (panel: NotebookPanel): void => {
      if (tracked.has(panel)) {
        return;
      }
      tracked.add(panel);
      highlightAgentCells(panel);
      const context = panel.context;
      let link = links.get(context);
      if (link === undefined) {
        link = new NotebookLink(panel, info);
        links.set(context, link);
      } else {
        link.addPanel(panel);
      }
      const turns = link;
      // Per panel, as the widget renderer is: a card needs its notebook's kernel.
      const rendermime = panel.content.rendermime;
      rendermime.addFactory({
        safe: true,
        mimeTypes: [RUN_MIME],
        defaultRank: RUN_RANK,
        createRenderer: () => new RunCard(rendermime.createRenderer('text/html'), turns)
      });
      const host = link;
      rendermime.addFactory({
        safe: true,
        mimeTypes: [ERROR_MIME],
        defaultRank: ERROR_RANK,
        createRenderer: () => new ErrorActions(rendermime.createRenderer(STDERR_MIME), host, panel)
      });
      panel.disposed.connect(() => {
        const current = links.get(context);
        current?.removePanel(panel);
        if (current?.isDisposed) {
          links.delete(context);
        }
      });
    };

    // Who uses this page is known once the server answered; kernels greeted before then hear it again.
    people.ready
      .then(() => links.forEach(link => link.greetAgain()))
      .catch((error: unknown) => console.debug('opencode-nb: the server did not say who uses this page', error));
    tracker.forEach(track);
    tracker.widgetAdded.connect((_, panel) => track(panel));
    console.debug(`opencode-nb ${VERSION}: activated`);
  }
};

export default plugin;
