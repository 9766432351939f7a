import { execFileSync } from 'node:child_process';
import { Browser, chromium } from 'playwright-core';

/**
 * The machine's Chromium (Debian's `chromium` package; `.ci/run` installs it when missing):
 * CHROMIUM_PATH, else the first of `chromium` / `chromium-browser` on the PATH. Playwright's own
 * browser download is not used: its host is out of reach where the tests run.
 */
export function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const found = execFileSync('which', [name], { encoding: 'utf8' }).trim();
      if (found) return found;
    } catch {
      // not on the PATH: try the next name
    }
  }
  return undefined;
}

/**
 * Whether browser tests run here: with a Chromium, always; without one, they are skipped with a
 * line saying how to get one, except under CI (`CI` set), where a missing browser is a failure.
 */
export function browserTestsRun(): boolean {
  if (findChromium() !== undefined || process.env.CI) return true;
  process.stderr.write(
    'Browser tests skipped: no Chromium here (apt-get install -y chromium, or set CHROMIUM_PATH)\n',
  );
  return false;
}

/** A headless Chromium; root (CI in a container) needs the sandbox off. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) {
    throw new Error('No Chromium: apt-get install -y chromium, or set CHROMIUM_PATH');
  }
  return chromium.launch({
    executablePath,
    headless: true,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}
