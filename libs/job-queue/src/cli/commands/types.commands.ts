import { Command } from '../command';
import { plain } from '../terminal';

/** `pause <type>` / `resume <type>`: kept in the database, on every node. */
function pauseCommand(name: 'pause' | 'resume', summary: string): Command {
  return {
    name,
    usage: `${name} <type>`,
    summary,
    args: ['type'],
    run: async ({ args: [type], out, withQueue }) => {
      await withQueue((queue) => queue[name](type));
      const paused = name === 'pause';
      out.result({ type, paused }, () => [`${plain(type)} ${paused ? 'paused' : 'resumed'}`]);
    },
  };
}

export const pauseTypeCommand = pauseCommand(
  'pause',
  "no worker claims the type's jobs until it is resumed (running ones finish)",
);
export const resumeTypeCommand = pauseCommand('resume', "workers claim the type's jobs again");
