/**
 * The samples of `name` in Prometheus' text format, by their labels (`status=pending,type=a`,
 * sorted; `le` included for buckets).
 */
export function samplesOf(text: string, name: string): Record<string, number> {
  const samples: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels = [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)]
      .map(([, label, value]) => `${label}=${value}`)
      .sort();
    samples[labels.join(',')] = Number(match[3]);
  }
  return samples;
}
