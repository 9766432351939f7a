/**
 * Throws one clear error when an entry point's optional peer is not installed: an app that
 * imports `nest-pg-job-queue/prometheus` without `prom-client` learns what to install, instead of
 * a `Cannot find module` from deep inside the package. Called first by each such entry point.
 */
export function requirePeer(entryPoint: string, peer: string): void {
  try {
    require.resolve(peer);
  } catch {
    throw new Error(
      `${entryPoint} needs the package ${peer}, which is not installed: npm install ${peer}`,
    );
  }
}
