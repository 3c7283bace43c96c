/** Services listen on every interface; the runner checks them over loopback. */
export function readinessUrl(port: number): string {
  return `http://127.0.0.1:${port}/readyz`;
}
