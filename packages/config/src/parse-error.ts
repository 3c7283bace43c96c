/**
 * Where a config file failed to parse, without its text: a parser's message often quotes the
 * offending line, and that line may hold a secret (a write key, a shared secret), so only the
 * kind of error, the line and the column are reported (and logged on a failed reload).
 */
export function parseErrorProblem(format: 'JSON' | 'YAML', text: string, err: unknown): string {
  const e = err as { code?: unknown; linePos?: { line: number; col: number }[]; message?: unknown };
  if (format === 'YAML') {
    const at = e.linePos?.[0];
    const kind = typeof e.code === 'string' ? ` (${e.code})` : '';
    return `is not valid YAML${kind}${at ? ` at line ${at.line}, column ${at.col}` : ''}`;
  }
  const position = /position (\d+)/.exec(String(e.message ?? ''));
  if (!position) return 'is not valid JSON';
  const offset = Number(position[1]);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const col = offset - before.lastIndexOf('\n');
  return `is not valid JSON at line ${line}, column ${col}`;
}
