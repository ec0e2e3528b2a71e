/** A service's Prometheus figures (its /metrics), as the benchmarks read them. */

/** The value of `name`'s first series in Prometheus text exposition; NaN when it has none. */
export function metricValue(text: string, name: string): number {
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
}

/** The value of `name`'s first series on the service at `baseUrl` now. */
export async function scrapeMetric(baseUrl: string, name: string): Promise<number> {
  return metricValue(await (await fetch(`${baseUrl}/metrics`)).text(), name);
}
