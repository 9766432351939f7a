import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODULE_OPTIONS } from '../../libs/job-queue/src/options/module-options.table';
import { WORKER_OPTIONS } from '../../libs/job-queue/src/options/worker-options.table';
import { EVENTS_OPTIONS } from '../../libs/job-queue/src/options/events-options.table';

// The package README's options table says what options/*.table.ts declares: every option, its
// default and its meaning, no more and no fewer. Change the table, then the README row.
describe('README "## Options" table', () => {
  function readmeRows(): Map<string, { defaultText: string; doc: string }> {
    const readme = readFileSync(join(__dirname, '../../libs/job-queue/README.md'), 'utf8');
    const section = readme.split('\n## Options\n')[1].split('\n## ')[0];
    const rows = new Map<string, { defaultText: string; doc: string }>();
    for (const line of section.split('\n')) {
      const cells = /^\| `([\w.]+)` \| (.+?) \| (.+) \|$/.exec(line);
      if (cells) rows.set(cells[1], { defaultText: cells[2], doc: cells[3] });
    }
    return rows;
  }

  function declaredRows(): Map<string, { defaultText: string; doc: string }> {
    const rows = new Map<string, { defaultText: string; doc: string }>();
    for (const [name, spec] of Object.entries(MODULE_OPTIONS)) {
      rows.set(name, { defaultText: spec.defaultText, doc: spec.doc });
    }
    for (const [name, spec] of Object.entries(WORKER_OPTIONS)) {
      rows.set(`worker.${name}`, { defaultText: spec.defaultText, doc: spec.doc });
    }
    for (const [name, spec] of Object.entries(EVENTS_OPTIONS)) {
      rows.set(`events.${name}`, { defaultText: spec.defaultText, doc: spec.doc });
    }
    return rows;
  }

  it('lists every declared option, and only those', () => {
    expect([...readmeRows().keys()].sort()).toEqual([...declaredRows().keys()].sort());
  });

  it('gives each option its declared default and meaning', () => {
    const readme = readmeRows();
    for (const [name, declared] of declaredRows()) {
      expect({ name, ...readme.get(name) }).toEqual({ name, ...declared });
    }
  });
});
