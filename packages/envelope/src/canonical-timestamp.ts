const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** `d` digits of `s` from `at` as a number, or -1 when any is not a digit. */
function digits(s: string, at: number, d: number): number {
  let n = 0;
  for (let i = at; i < at + d; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * The form nearly every client sends and every Sluice service writes, `YYYY-MM-DDTHH:MM:SS.sssZ`
 * (what `toISOString` writes), read without a regex into epoch milliseconds; undefined when
 * `value` is not exactly that form or not a real date (Feb 30, hour 24). A value it accepts is
 * its own ISO 8601 normalisation: `new Date(ms).toISOString() === value`.
 */
export function parseCanonicalTimestamp(value: string): number | undefined {
  if (
    value.length !== 24 ||
    value[4] !== '-' ||
    value[7] !== '-' ||
    value[10] !== 'T' ||
    value[13] !== ':' ||
    value[16] !== ':' ||
    value[19] !== '.' ||
    value[23] !== 'Z'
  )
    return undefined;
  const year = digits(value, 0, 4),
    month = digits(value, 5, 2),
    day = digits(value, 8, 2);
  const hour = digits(value, 11, 2),
    minute = digits(value, 14, 2),
    second = digits(value, 17, 2),
    ms = digits(value, 20, 3);
  // Years below 100 take the general path (Date.UTC maps them to 19xx, as it always did there).
  if (
    year < 100 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 59 ||
    ms < 0
  )
    return undefined;
  if (day > DAYS_IN_MONTH[month - 1]! || (month === 2 && day === 29 && !isLeap(year))) return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}
