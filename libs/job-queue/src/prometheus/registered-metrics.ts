import type { Metric, Registry, RegistryContentType } from 'prom-client';

/** A metric's name as registered (an OpenMetrics registry renames counters as it exports them). */
const nameOf = (metric: Metric): string => (metric as unknown as { name: string }).name;

/**
 * Registers `metrics` in `registry`, all or none (a name taken already throws prom-client's
 * error, and the ones registered before it are removed again), and returns their removal. The
 * removal takes out only these objects: a metric registered since under the same name stays.
 */
export function registerMetrics(
  registry: Registry<RegistryContentType>,
  metrics: readonly Metric[],
): () => void {
  const registered: Array<[name: string, metric: Metric]> = [];
  const unregister = () => {
    for (const [name, metric] of registered) {
      if (registry.getSingleMetric(name) === metric) registry.removeSingleMetric(name);
    }
    registered.length = 0;
  };
  try {
    for (const metric of metrics) {
      const name = nameOf(metric);
      registry.registerMetric(metric);
      registered.push([name, metric]);
    }
  } catch (error) {
    unregister();
    throw error;
  }
  return unregister;
}
