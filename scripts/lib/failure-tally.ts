// A node:test reporter that counts what failed, for the test commands' own exit code
// (scripts/lib/run-tests.sh): the run fails when any test failed, whatever exit code the runner
// ended with. Writes one JSON line `{ "failed": n, "passed": n }` to its destination.
import type { TestEvent } from 'node:test/reporters';

export default async function* failureTally(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  let failed = 0;
  let passed = 0;
  for await (const event of source) {
    if (event.type === 'test:fail' && !event.data.todo && !event.data.skip) failed += 1;
    else if (event.type === 'test:pass' && !event.data.todo && !event.data.skip) passed += 1;
  }
  yield `${JSON.stringify({ failed, passed })}\n`;
}
