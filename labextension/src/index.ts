/**
 * opencode-nb: lets the agents of a notebook's kernel read, edit and run its cells (the `opencode_nb`
 * comm, see ../PROTOCOL.md), and shows `%%agent` cells as the markdown prompts they are.
 */

import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';
import type { DocumentRegistry } from '@jupyterlab/docregistry';

import { NotebookLink } from './comm';
import { highlightAgentCells } from './highlight';
import { VERSION } from './version';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'opencode-nb:plugin',
  description: 'Lets opencode_nb agents read, edit and run cells of the live notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    const info = { version: VERSION, frontend: `${app.name} ${app.version}` };
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
      const link = links.get(context);
      if (link === undefined) {
        links.set(context, new NotebookLink(panel, info));
      } else {
        link.addPanel(panel);
      }
      panel.disposed.connect(() => {
        const current = links.get(context);
        current?.removePanel(panel);
        if (current?.isDisposed) {
          links.delete(context);
        }
      });
    };

    tracker.forEach(track);
    tracker.widgetAdded.connect((_, panel) => track(panel));
    console.debug(`opencode-nb ${VERSION}: activated`);
  }
};

export default plugin;
