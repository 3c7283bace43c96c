/** The text a service's `/metrics` route answers; `base` is its URL (`http://127.0.0.1:port`) or port. */
export async function scrapeMetrics(base: string | number): Promise<string> {
  const url = typeof base === 'number' ? `http://127.0.0.1:${base}` : base;
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`${url}/metrics answered ${res.status}`);
  return res.text();
}

/** The sum of every series of metric `name` in Prometheus text `text` (0 when it has none). */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

/** Scrapes `base` and sums metric `name` over its series. */
export async function metric(base: string | number, name: string): Promise<number> {
  return metricSum(await scrapeMetrics(base), name);
}
